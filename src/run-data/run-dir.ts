// The run directory of docs/architecture.md#run-directory: <out>/<suite>/<time>/ and <out>/latest → that directory
// (a relative symlink, replaced atomically so a reader never sees it missing).
import { mkdirSync, renameSync, symlinkSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

/** A file-system-safe timestamp, sortable: 2026-11-30T19-04-10.123Z. */
export function runTimeStamp(date: Date): string {
  return date.toISOString().replace(/:/g, '-');
}

export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '_');
}

export function createRunDir(outRoot: string, suite: string, date: Date): string {
  const dir = join(outRoot, safeName(suite), runTimeStamp(date));
  mkdirSync(join(dir, 'logs'), { recursive: true });
  return dir;
}

export function pointLatest(outRoot: string, runDir: string): void {
  const link = join(outRoot, 'latest');
  const tmp = `${link}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  symlinkSync(relative(outRoot, runDir), tmp);
  renameSync(tmp, link);
}
