// The one launcher of limbo's child processes, on real processes: the kept tail and the log
// file, readiness by a line or a probe (given up on exit, bounded), a bounded stop, and the
// SIGKILL of a child left running when its parent exits.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ChildExitedError, ChildLauncher, OutputTail } from '../../src/launch/child-launcher.js';
import { TimeoutError } from '../../src/util/errors.js';
import { pidAlive } from '../../src/util/pid-alive.js';
import { waitFor } from '../../src/util/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'limbo-launcher-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function node(name: string, script: string, logFile?: string): ChildLauncher {
  return ChildLauncher.launch({
    name,
    command: process.execPath,
    args: ['-e', script],
    tailLines: 3,
    ...(logFile !== undefined ? { logFile } : {}),
  });
}

test('keeps the last lines of stdout and stderr and writes them all to the log file', async () => {
  const logFile = join(dir, 'logs', 'talker.log');
  const child = node(
    'talker',
    `for (let i = 1; i <= 5; i++) console.log('out ' + i); console.error('err 6');`,
    logFile,
  );
  assert.equal(await child.exited, 0);
  assert.equal(child.isRunning(), false);
  assert.equal(child.exitCode(), 0);
  const kept = child.tail().split('\n');
  assert.equal(kept.length, 3, `kept ${child.tail()}`);
  assert.ok(kept.includes('err 6') && !kept.includes('out 1'), child.tail());
  // The log file is closed shortly after the exit (bounded).
  await waitFor(() => Promise.resolve(readFileSync(logFile, 'utf8').split('\n').length === 7), {
    what: 'the log file holds every line',
    timeoutMs: 5000,
  });
});

test('ready on its line; a process that exits first or stays silent is given up on', async () => {
  const ready = node('ready', `console.log('noise'); console.log('READY 42'); setTimeout(() => {}, 60000);`);
  const port = await ready.untilReady({
    timeoutMs: 10_000,
    matchLine: (line) => (line.startsWith('READY ') ? Number(line.slice(6)) : undefined),
  });
  assert.equal(port, 42);
  const outcome = await ready.stop(5000);
  assert.equal(outcome?.graceful, true);
  assert.equal(await ready.stop(5000), undefined, 'a second stop of an exited process does nothing');

  const quitter = node('quitter', `process.exit(3)`);
  await assert.rejects(
    quitter.untilReady({ timeoutMs: 10_000, matchLine: () => undefined }),
    (err: unknown) =>
      err instanceof ChildExitedError && /quitter exited \(3\) before it was ready/.test(err.message),
  );

  const silent = node('silent', `setTimeout(() => {}, 60000);`);
  await assert.rejects(
    silent.untilReady({ timeoutMs: 300, matchLine: () => undefined }),
    (err: unknown) =>
      err instanceof TimeoutError && /silent did not become ready within 300 ms/.test(err.message),
  );
  await silent.stop(5000);
});

test('ready by a probe, aborted when the process exits', async () => {
  const probed = node('probed', `setTimeout(() => {}, 60000);`);
  assert.equal(await probed.untilReady({ timeoutMs: 10_000, probe: () => Promise.resolve('up') }), 'up');
  await probed.stop(5000);

  let aborted = false;
  const dies = node('dies', `setTimeout(() => process.exit(1), 100);`);
  await assert.rejects(
    dies.untilReady({
      timeoutMs: 10_000,
      probe: (signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          }),
        ),
    }),
    ChildExitedError,
  );
  assert.equal(aborted, true);
});

test('a paused process that ignores SIGTERM is SIGKILLed after the grace period', async () => {
  const stubborn = node(
    'stubborn',
    `process.on('SIGTERM', () => {}); console.log('R'); setTimeout(() => {}, 60000);`,
  );
  await stubborn.untilReady({ timeoutMs: 10_000, matchLine: (l) => (l === 'R' ? true : undefined) });
  stubborn.kill('SIGSTOP');
  const [a, b] = await Promise.all([stubborn.stop(300), stubborn.stop(300)]);
  assert.equal(a, b, 'two stops at once are one stop');
  assert.equal(a?.graceful, false);
  assert.ok(a !== undefined && a.ms >= 290, `SIGKILL after the grace period (${a?.ms} ms)`);
  assert.equal(await stubborn.exited, 'SIGKILL');
  assert.equal(stubborn.lastStop(), a);
});

test('killOnParentExit: a child left running is SIGKILLed when its parent exits', async () => {
  const launcher = new URL('../../src/launch/child-launcher.js', import.meta.url).href;
  const marker = join(dir, 'parent-exit-ran');
  // The parent launches a long sleeper, prints its PID and exits without stopping it.
  const parentScript = `
    import { ChildLauncher } from ${JSON.stringify(launcher)};
    import { writeFileSync } from 'node:fs';
    const c = ChildLauncher.launch({ name: 'orphan', command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60000)'] });
    c.killOnParentExit(() => writeFileSync(${JSON.stringify(marker)}, 'yes'));
    console.log(c.pid);
    setTimeout(() => process.exit(0), 200);
  `;
  const parent = spawn(process.execPath, ['--input-type=module', '-e', parentScript], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  parent.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise((resolve) => parent.once('exit', resolve));
  assert.equal(code, 0);
  const pid = Number(out.trim());
  assert.ok(pid > 0, `the parent printed the child's PID: ${out}`);
  try {
    await waitFor(() => Promise.resolve(!pidAlive(pid)), { what: `orphan ${pid} is gone`, timeoutMs: 5000 });
  } finally {
    if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
  }
  assert.equal(readFileSync(marker, 'utf8'), 'yes');
});

test('OutputTail without a log file keeps lines only', () => {
  const t = new OutputTail(2);
  t.add('a');
  t.add('b');
  t.add('c');
  assert.equal(t.tail(5), 'b\nc');
  assert.equal(
    t.some((l) => l === 'a'),
    false,
  );
  t.endLog(); // nothing to close
});
