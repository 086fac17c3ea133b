// The final heal waits for a scheduled heal still in progress (a container restart can take
// a second or more) instead of letting the run move on — and clean up — under it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import { at, startSchedule } from '../../src/faults/schedule.js';
import type { Fault, FaultContext } from '../../src/faults/fault.js';

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
