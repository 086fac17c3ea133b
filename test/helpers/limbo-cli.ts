// The `limbo` command as a user runs it: bin/limbo.js in a child process, from the package
// root (so suite files written there import `limbo` through the package's self-reference).
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root (this file is dist/test/helpers/…). */
export const packageRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs `limbo …args` to the end (killed after `timeoutMs`); its exit status and output. */
export function limboSync(args: readonly string[], timeoutMs: number): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [join(packageRoot, 'bin', 'limbo.js'), ...args], {
    cwd: packageRoot,
    encoding: 'utf8',
    timeout: timeoutMs,
  });
}

export interface Captured {
  code: number | null;
  output: string;
}

/**
 * Runs `command …args` without blocking this process (a server it must answer may live here),
 * stdout and stderr captured together; rejects with the output so far if it still runs after
 * `timeoutMs` (then interrupted with SIGINT, as a user's Ctrl-C).
 */
export function spawnCaptured(
  command: string,
  args: readonly string[],
  o: { cwd?: string; env?: Record<string, string>; timeoutMs: number },
): Promise<Captured> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: o.cwd ?? packageRoot,
      env: { ...process.env, ...o.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGINT');
      reject(new Error(`${[command, ...args].join(' ')} still running after ${o.timeoutMs} ms:\n${output}`));
    }, o.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** `limbo …args` as spawnCaptured runs it, from the package root. */
export function limboAsync(
  args: readonly string[],
  o: { env?: Record<string, string>; timeoutMs: number },
): Promise<Captured> {
  return spawnCaptured(process.execPath, [join(packageRoot, 'bin', 'limbo.js'), ...args], o);
}
