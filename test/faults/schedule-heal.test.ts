// The final heal waits for a scheduled heal still in progress (a container restart can take
// a second or more) instead of letting the run move on — and clean up — under it. An inject is
// bounded, by the fault's own bound when the target gives a longer one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import { at, startSchedule } from '../../src/faults/schedule.js';
import type { Fault, FaultContext } from '../../src/faults/fault.js';
import { transferLeadership } from '../../src/faults/process-faults.js';
import { leaderWaitMs } from '../../src/faults/selectors.js';
import { leadershipTransferBoundMs } from '../../src/targets/declarative/leadership-transfer.js';

test('finalHeal awaits a heal in progress and heals each fault once', async () => {
  let heals = 0;
  let healDone = false;
  const slowHeal: Fault = {
    name: 'slow',
    describe: 'a fault whose heal takes 300 ms',
    inject: () => Promise.resolve({ target: 'x', affects: ['x'] }),
    heal: async () => {
      heals++;
      await new Promise((r) => setTimeout(r, 300));
      healDone = true;
    },
  };
  // The fault touches no target: the scheduler is what is under test.
  const ctx = { random: createRandom(1) } as unknown as FaultContext;
  const sched = startSchedule([at(0, slowHeal, { for: 10 })], ctx, createClock());
  const deadline = Date.now() + 5000;
  while (heals === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  assert.equal(heals, 1, 'the scheduled heal started');
  assert.equal(healDone, false);
  await sched.finalHeal();
  assert.equal(healDone, true, 'finalHeal returned only once the heal in progress was done');
  assert.equal(heals, 1);
  assert.ok(sched.windows[0]?.healedAtMs !== undefined);
});

test("an inject is bounded by the schedule's bound, or by the fault's own when the target gives a longer one", async () => {
  const slowInject = (ms: number, boundMs?: number): Fault => ({
    name: 'slow-inject',
    describe: `an inject that takes ${ms} ms`,
    inject: async () => {
      await new Promise((r) => setTimeout(r, ms));
      return { target: 'x', affects: ['x'] };
    },
    heal: () => Promise.resolve(),
    ...(boundMs !== undefined ? { injectBoundMs: () => boundMs } : {}),
  });
  const ctx = { random: createRandom(1) } as unknown as FaultContext;
  const run = async (fault: Fault) => {
    const errors: string[] = [];
    const sched = startSchedule(
      [at(0, fault, { for: 10 })],
      ctx,
      createClock(),
      { onError: (m) => errors.push(m) },
      {
        injectTimeoutMs: 100,
      },
    );
    const deadline = Date.now() + 5000;
    while (sched.windows.length === 0 && sched.skipped.length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    await sched.finalHeal();
    return { injected: sched.windows.length, errors };
  };
  // 300 ms against the schedule's 100 ms: cut off, named.
  const cut = await run(slowInject(300));
  assert.equal(cut.injected, 0);
  assert.match(cut.errors.join('\n'), /inject of slow-inject .*failed: .*100 ms/);
  // The fault's own bound (as a declared transfer's timeoutMs) is longer: it lands.
  const own = await run(slowInject(300, 1000));
  assert.equal(own.injected, 1, own.errors.join('\n'));
  // A shorter own bound never shortens the schedule's.
  const shorter = await run(slowInject(60, 10));
  assert.equal(shorter.injected, 1, shorter.errors.join('\n'));
});

test("a leadership transfer's inject may take the target's own bound on the move (a declared timeoutMs)", () => {
  const fault = transferLeadership({ partition: 0 });
  const withBound = { target: { transferLeadershipBoundMs: 25_000 } } as unknown as FaultContext;
  assert.equal(fault.injectBoundMs?.(withBound), leaderWaitMs + 25_000 + 2000);
  assert.equal(fault.injectBoundMs?.({ target: {} } as unknown as FaultContext), undefined);
  assert.equal(leadershipTransferBoundMs({ command: 'x', timeoutMs: 25_000 }), 25_000);
  assert.equal(leadershipTransferBoundMs({ command: 'x' }), 10_000);
});
