// An error's stack with its frames in a bundle (dist/src/cli/limbo.bundle.mjs or
// serve.bundle.cjs: one esbuild file of the runner or a service) pointed back at the
// TypeScript lines, read from the bundle's source map only when a stack is shown: loading the
// map with the bundle (Node's --enable-source-maps) would hold its ~6 MB for the process's
// life to serve the rare crash.
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const maps = new Map<string, SourceMap | undefined>();

function mapOf(bundle: string): SourceMap | undefined {
  if (!maps.has(bundle)) {
    let map: SourceMap | undefined;
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')) as SourceMapPayload);
    } catch {
      map = undefined; // no map beside it (or not one we can read): frames stay as they are
    }
    maps.set(bundle, map);
  }
  return maps.get(bundle);
}

const bundleFrame = /((?:file:\/\/)?\/[^\s():]+\.bundle\.[cm]js):(\d+):(\d+)/g;

/**
 * `stack` with every `….bundle.mjs:line:col` (or `.cjs`) that its bundle's source map knows
 * replaced by the source's `file:line:col`.
 */
export function mapStack(stack: string): string {
  return stack.replace(bundleFrame, (frame: string, file: string, line: string, col: string) => {
    const path = file.startsWith('file://') ? fileURLToPath(file) : file;
    const entry = mapOf(path)?.findEntry(Number(line) - 1, Number(col) - 1);
    if (entry === undefined || !('originalSource' in entry)) return frame;
    const source = entry.originalSource.startsWith('file://')
      ? fileURLToPath(entry.originalSource)
      : isAbsolute(entry.originalSource)
        ? entry.originalSource
        : resolve(dirname(path), entry.originalSource);
    return `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}
