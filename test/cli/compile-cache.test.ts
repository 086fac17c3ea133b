// Every `limbo` process turns on V8's compile cache where Node has one (≥ 22.1): a run writes the
// bytecode of its modules to LIMBO_COMPILE_CACHE (Node itself knows nothing of that variable, so
// only limbo's own call can write there); `off` writes nothing. On Node 20 there is no cache to
// turn on, and the test says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { limboCommand } from '../../src/runtime/process.js';

const hasCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

function filesUnder(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
  } catch {
    return 0;
  }
}

function limbo(args: string[], env: NodeJS.ProcessEnv, cwd?: string): number | null {
  const { command, args: base } = limboCommand({});
  return spawnSync(command, [...base, ...args], { env, cwd, stdio: 'ignore', timeout: 30_000 }).status;
}

test(
  'limbo writes its modules to the compile cache, and not when it is disabled',
  { skip: !hasCache && `Node ${process.version} has no module.enableCompileCache` },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'limbo-compile-cache-'));
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, LIMBO_COMPILE_CACHE: join(dir, 'on') };
      delete env.NODE_COMPILE_CACHE;
      delete env.NODE_DISABLE_COMPILE_CACHE;
      assert.equal(limbo(['run', '--help'], env), 0);
      const written = filesUnder(join(dir, 'on'));
      assert.ok(written > 5, `the first run wrote the bytecode of its modules (${written} files)`);
      // `off` is not a directory name: run where one would appear, nothing does.
      assert.equal(limbo(['run', '--help'], { ...env, LIMBO_COMPILE_CACHE: 'off' }, dir), 0);
      assert.equal(filesUnder(join(dir, 'off')), 0, '`off` wrote nothing');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
