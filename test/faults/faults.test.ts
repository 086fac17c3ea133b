import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import {
  at,
  clientsBeforeProcessors,
  createFault,
  faultNames,
  kill,
  leaderOf,
  link,
  pause,
  restart,
  scheduleEndMs,
  startSchedule,
  transferLeadership,
  type FaultContext,
  type ActiveFault,
} from '../../src/faults/index.js';
import { selectLink } from '../../src/faults/selectors.js';
import { startToyTarget } from '../helpers/toy-target.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const procState = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(20);
  }
}

test('kill(leaderOf) kills the leader with -9 and its heal restarts it; the window says leader', async (t) => {
  const target = await startToyTarget(2);
  t.after(() => target.stop());
  const ctx: FaultContext = { target, toxiproxy: target.toxiproxy, random: createRandom(1) };
  const before = target.services.get('processor-1')!.pid()!;
  const changes: [ActiveFault, boolean][] = [];
  const sched = startSchedule(
    [at('50ms', kill(leaderOf({ partition: 0 })), { for: '300ms' })],
    ctx,
    createClock(),
    {
      onChange: (_a, f, on) => changes.push([f, on]),
    },
  );
  await until(() => sched.windows.length === 1);
  await until(() => !target.services.get('processor-1')!.isRunning());
  assert.equal(target.services.get('processor-2')!.isRunning(), true);
  await until(() => sched.windows[0]!.healedAtMs !== undefined);
  const w = sched.windows[0]!;
  assert.equal(w.fault, 'kill');
  assert.equal(w.target, 'processor-1');
  assert.equal(w.leader, true);
  assert.ok(w.healedAtMs! - w.injectedAtMs >= 290, `window ${w.injectedAtMs}..${w.healedAtMs}`);
  const after = target.services.get('processor-1')!.pid();
  assert.ok(after !== undefined && after !== before, 'restarted as a new process');
  assert.deepEqual(
    changes.map(([f, on]) => `${f.fault}@${f.target}:${on}`),
    ['kill@processor-1:true', 'kill@processor-1:false'],
  );
  // the log of both incarnations is in the run directory
  assert.ok(existsSync(join(target.runDir, 'logs', 'processor-1.log')));
  await sched.finalHeal(); // nothing left: a no-op
  assert.equal(sched.windows.length, 1);
});

test('pause stops the process (state T) until its heal; the final heal heals open-ended faults and skips unfired ones', async (t) => {
  const target = await startToyTarget(2);
  t.after(() => target.stop());
  const ctx: FaultContext = { target, toxiproxy: target.toxiproxy, random: createRandom(1) };
  const sched = startSchedule(
    [at('0ms', pause('processor-2')), at('60s', kill('processor-1'), { for: '1s' })],
    ctx,
    createClock(),
  );
  const pid = target.services.get('processor-2')!.pid()!;
  await until(() => sched.windows.length === 1);
  await until(() => procState(pid) === 'T');
  assert.deepEqual(sched.active(), [{ fault: 'pause', target: 'processor-2' }]);
  await sched.finalHeal();
  await until(() => procState(pid) !== 'T');
  assert.equal(sched.active().length, 0);
  assert.ok(sched.windows[0]!.healedAtMs !== undefined);
  assert.deepEqual(
    sched.skipped.map((s) => s.fault),
    ['kill'],
  );
  assert.equal(target.services.get('processor-1')!.isRunning(), true);
});

test('a fault on an unknown target is skipped with an error, never thrown into the run', async (t) => {
  const target = await startToyTarget(1);
  t.after(() => target.stop());
  const errors: string[] = [];
  const ctx: FaultContext = { target, toxiproxy: target.toxiproxy, random: createRandom(1) };
  const sched = startSchedule(
    [at(0, kill('processor-9')), at(0, kill(leaderOf({ partition: 5 })))],
    ctx,
    createClock(),
    {
      onError: (m) => errors.push(m),
    },
  );
  await until(() => sched.skipped.length === 2);
  await sched.finalHeal();
  assert.equal(sched.windows.length, 0);
  assert.match(errors.join('\n'), /no service processor-9/);
  assert.match(errors.join('\n'), /partition 5 has no known leader/);
});

test('restart, transfer-leadership and clients-before-processors', async (t) => {
  const target = await startToyTarget(3);
  t.after(() => target.stop());
  const ctx: FaultContext = { target, toxiproxy: target.toxiproxy, random: createRandom(4) };
  const pid = target.services.get('processor-3')!.pid();
  const r = restart('processor-3');
  await r.heal(ctx, await r.inject(ctx));
  assert.notEqual(target.services.get('processor-3')!.pid(), pid);
  assert.equal(target.services.get('processor-3')!.isRunning(), true);

  const tl = transferLeadership({ partition: 0 });
  const inj = await tl.inject(ctx);
  assert.equal(inj.target, 'processor-1');
  assert.equal(inj.leader, true);
  assert.notEqual(target.transfers[0]!.node, 'processor-1');
  assert.equal(await target.leaderOf(0), target.transfers[0]!.node);

  const cbp = clientsBeforeProcessors();
  const down = await cbp.inject(ctx);
  assert.deepEqual(down.affects, ['processor-1', 'processor-2', 'processor-3']);
  assert.ok([...target.services.values()].every((s) => !s.isRunning()));
  await cbp.heal(ctx, down);
  assert.ok([...target.services.values()].every((s) => s.isRunning()));
});

test('links resolve by name or by selectors; the registry builds faults from data', async (t) => {
  const target = await startToyTarget(1);
  t.after(() => target.stop());
  const ctx: FaultContext = { target, toxiproxy: target.toxiproxy, random: createRandom(1) };
  assert.equal(
    (await selectLink(ctx, link('ingress-1', leaderOf({ partition: 0 })))).link,
    'ingress->processor-1',
  );
  assert.equal((await selectLink(ctx, 'ingress->processor-1')).proxy, 'ingress->processor-1');
  await assert.rejects(selectLink(ctx, 'client->nowhere'), /no link/);
  for (const n of [
    'latency',
    'bandwidth',
    'timeout',
    'reset_peer',
    'slow_close',
    'slicer',
    'limit_data',
    'link-down',
    'kill',
    'pause',
    'restart',
    'transfer-leadership',
    'clients-before-processors',
  ])
    assert.ok(faultNames().includes(n), n);
  assert.equal(createFault('latency', { on: 'ingress->processor-1', latencyMs: 100 }).name, 'latency');
  assert.throws(() => createFault('meteor'), /unknown fault meteor/);
  assert.equal(scheduleEndMs([at('5s', kill('x'), { for: '3s' }), at('1s', kill('y'))]), 8000);
});

test('cleanup kills every tracked process', async () => {
  const target = await startToyTarget(2);
  const pids = [...target.services.values()].map((s) => s.pid()!);
  assert.equal(pids.length, 2);
  for (const pid of pids) assert.ok(Number.isInteger(pid) && pid > 0, `a running process: ${pid}`);
  await target.stop();
  for (const pid of pids) assert.throws(() => process.kill(pid, 0), /ESRCH/);
});
