// A stop is SIGTERM, then SIGKILL after the grace period: the handle records which one ended
// the process (what the gracefulStops check reads), with real child processes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startProcess } from '../../src/runtime/process.js';

const ready = `console.log('limbo-ready ' + JSON.stringify({ role: 'log', node: 't', addresses: {} }));`;

function child(onTerm: string) {
  return startProcess({
    name: 'stop-test',
    command: process.execPath,
    // The handler goes in before the ready line (the stop may come the moment that is read);
    // it stays alive (bounded: 60 s) until a signal ends it.
    args: ['-e', `process.on('SIGTERM', () => { ${onTerm} }); ${ready} setTimeout(() => {}, 60000);`],
    readyTimeoutMs: 10_000,
  });
}

test('a process that exits on SIGTERM stops gracefully', async () => {
  const p = await child('process.exit(0);');
  assert.equal(p.lastStop(), undefined);
  await p.stop(5000);
  const s = p.lastStop();
  assert.ok(s !== undefined);
  assert.equal(s.graceful, true);
  assert.ok(s.ms < 5000, `stopped in ${s.ms} ms`);
  assert.equal(s.graceMs, 5000);
});

test('a process that ignores SIGTERM is SIGKILLed after the grace period, and says so', async () => {
  const p = await child('/* ignored: a shutdown that hangs */');
  await p.stop(300);
  const s = p.lastStop();
  assert.ok(s !== undefined);
  assert.equal(s.graceful, false);
  assert.ok(s.ms >= 290, `SIGKILL came after the grace period (${s.ms} ms)`);
  assert.equal(p.isRunning(), false);
  assert.equal(await p.exited, 'SIGKILL');
});
