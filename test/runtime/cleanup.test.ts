// A run's cleanup ends every process it started, also one still waiting for its ready line when
// the run is stopped: tracked from its spawn, it is killed by the cleanup (or at the run's exit),
// and one that spawns after the cleanup has begun is killed at once. Real child processes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createCleanup } from '../../src/runtime/cleanup.js';
import { createLocalService } from '../../src/runtime/local.js';
import { startProcess } from '../../src/runtime/process.js';
import { pidAlive } from '../../src/util/pid-alive.js';
import { sleep } from '../../src/util/backoff.js';

/** A process that prints its ready line only after `readyAfterMs` (and then runs on). */
const slowToStart = (readyAfterMs: number): string[] => [
  '-e',
  `setTimeout(() => console.log('limbo-ready ' + JSON.stringify({ role: 'slow', node: 'slow', addresses: {} })), ${readyAfterMs}); setInterval(() => {}, 1000);`,
];

async function untilGone(pid: number, boundMs: number): Promise<boolean> {
  for (const deadline = Date.now() + boundMs; Date.now() < deadline;) {
    if (!pidAlive(pid)) return true;
    await sleep(50);
  }
  return !pidAlive(pid);
}

test('a service still starting when the cleanup runs is killed, and its start fails', async () => {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-cleanup-'));
  try {
    const cleanup = createCleanup();
    let spawned: number | undefined;
    const svc = createLocalService(
      {
        name: 'slow',
        role: 'processor',
        start: (logFile, onSpawn) =>
          startProcess({
            name: 'slow',
            command: process.execPath,
            args: slowToStart(30_000),
            logFile,
            readyTimeoutMs: 60_000,
            onSpawn: (pid) => {
              spawned = pid;
              onSpawn(pid);
            },
          }),
      },
      runDir,
      cleanup,
    );
    cleanup.add('service slow', () => svc.stop());
    const starting = svc.start().then(
      () => new Error('started'),
      (err: unknown) => err,
    );
    for (const deadline = Date.now() + 10_000; spawned === undefined && Date.now() < deadline;)
      await sleep(20);
    assert.ok(spawned !== undefined && pidAlive(spawned), 'the process spawned');
    await cleanup.runAll();
    assert.ok(await untilGone(spawned, 5000), `pid ${spawned} still alive after the cleanup`);
    assert.match(String(await starting), /exited \(SIGKILL\) before it was ready/);
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
});

test('a process tracked after the cleanup has begun is killed at once', async () => {
  const cleanup = createCleanup();
  await cleanup.runAll();
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  const exited = new Promise<string | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  try {
    cleanup.trackPid(child.pid!);
    const bound = sleep(5000).then(() => 'still running after 5 s');
    assert.equal(await Promise.race([exited, bound]), 'SIGKILL');
  } finally {
    child.kill('SIGKILL');
  }
});

test('a run that exits while a service waits for its ready line leaves no process behind', async () => {
  // A child runner: starts a slow service through a cleanup and exits (as on Ctrl-C) before
  // the service is ready; it prints the service's PID first.
  const runner = `
    import { createCleanup } from ${JSON.stringify(new URL('../../src/runtime/cleanup.js', import.meta.url).href)};
    import { createLocalService } from ${JSON.stringify(new URL('../../src/runtime/local.js', import.meta.url).href)};
    import { startProcess } from ${JSON.stringify(new URL('../../src/runtime/process.js', import.meta.url).href)};
    const cleanup = createCleanup();
    const svc = createLocalService({ name: 'slow', role: 'processor', start: (logFile, onSpawn) => startProcess({
      name: 'slow', command: process.execPath, args: ${JSON.stringify(slowToStart(30_000))}, logFile,
      readyTimeoutMs: 60_000, onSpawn: (pid) => { console.log('spawned ' + pid); onSpawn(pid); } }) },
      ${JSON.stringify(mkdtempSync(join(tmpdir(), 'limbo-cleanup-exit-')))}, cleanup);
    svc.start().catch(() => {});
    setTimeout(() => process.exit(130), 500);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', runner], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  assert.equal(code, 130, err);
  const pid = Number(/spawned (\d+)/.exec(out)?.[1]);
  assert.ok(pid > 0, out + err);
  assert.ok(await untilGone(pid, 5000), `pid ${pid} outlived its runner`);
});
