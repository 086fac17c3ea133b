// The `limbo` command as a user runs it: bin/limbo.js in a child process, from the package
// root (so suite files written there import `limbo` through the package's self-reference).
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
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
