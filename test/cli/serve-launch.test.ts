// A service started from its bundle (serve-launch.ts) writes the bytecode V8 compiled for it
// once it has started, runs from that bytecode on the next start (V8 took it: nothing is
// written again, even after the bundle was rewritten with the same bytes), and writes it anew
// when V8 refuses the file, removing the same role's bytecode of another bundle. Real log
// services, started as a run starts them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceEntry, serviceEntryFiles, startLimboService } from '../../src/runtime/process.js';
import { waitFor } from '../../src/util/wait.js';

const bytecodeOf = (dir: string): string[] =>
  existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith('serve-log-') && f.endsWith('.bin')) : [];

test('a service writes its bytecode once started, runs from it next time, and replaces what V8 refuses', async () => {
  assert.equal(serviceEntry({}), serviceEntryFiles.launcher, 'services start from the bundle in this build');
  const root = mkdtempSync(join(tmpdir(), 'limbo-bytecode-'));
  const cache = join(root, 'cache');
  const env = { ...process.env, LIMBO_COMPILE_CACHE: cache };
  let n = 0;
  const serveLog = async (): Promise<void> => {
    const log = await startLimboService(
      'log',
      ['--port', '0', '--metrics-port', '0', '--data-dir', join(root, `data-${++n}`)],
      { env, readyTimeoutMs: 20_000 },
    );
    try {
      const metrics = await (
        await fetch(String(log.ready.addresses.metrics), { signal: AbortSignal.timeout(5000) })
      ).text();
      assert.match(metrics, /^limbo_log_/m, 'the service serves');
      // Past the launcher's write delay (2 s): a start that writes has written by then.
      await new Promise((r) => setTimeout(r, 3000));
    } finally {
      await log.stop(5000);
    }
  };
  try {
    // First start: nothing cached, so the bytecode is written once the service has started.
    await serveLog();
    const [name] = bytecodeOf(cache);
    assert.ok(name !== undefined, `bytecode written: ${readdirSync(root).join(', ')}`);
    const file = join(cache, name);
    const first = statSync(file);
    assert.ok(first.size > 100_000, `the bundle's bytecode and the functions it ran (${first.size} bytes)`);

    // Second start: V8 takes the file (under the same Node, flags and bundle), so it stays as it
    // was — also after a rebuild that changed nothing (npx in a fresh clone runs the package's
    // prepare, which rewrites the bundle with the same bytes).
    const now = new Date();
    utimesSync(serviceEntryFiles.bundle, now, now);
    await serveLog();
    assert.deepEqual(bytecodeOf(cache), [name]);
    assert.equal(
      statSync(file).mtimeMs,
      first.mtimeMs,
      'the second start used the bytecode and wrote nothing',
    );

    // A file V8 refuses, beside the same role's bytecode of an older bundle: the service still
    // starts, writes its bytecode anew and removes the older bundle's.
    const prefix = name.split('-').slice(0, 3).join('-') + '-';
    const older = join(cache, `${prefix}1-1.bin`);
    writeFileSync(older, 'an older build');
    writeFileSync(file, Buffer.alloc(4096, 7));
    await serveLog();
    await waitFor(() => Promise.resolve(readFileSync(file).length > 100_000), {
      what: 'refused bytecode written anew',
      timeoutMs: 10_000,
    });
    assert.equal(existsSync(older), false, "the older bundle's bytecode is gone");
    assert.deepEqual(bytecodeOf(cache), [name]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
