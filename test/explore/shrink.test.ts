import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shrinkSchedule } from '../../src/explore/shrink.js';
import type { PlannedFault } from '../../src/explore/plan.js';

const f = (fault: string, atMs: number, forMs: number, on = 'ingress->processor-1'): PlannedFault => ({
  atMs,
  forMs,
  fault,
  params: { on },
});

test('drops every fault the failure does not need and halves durations while it still fails', async () => {
  const failing = [f('latency', 0, 2000), f('kill', 1000, 4000, 'processor-1'), f('link-down', 3000, 1000)];
  // The "system": fails whenever a kill of at least 1 s is in the schedule.
  const fails = (c: PlannedFault[]): Promise<boolean> =>
    Promise.resolve(c.some((p) => p.fault === 'kill' && p.forMs >= 1000));
  const r = await shrinkSchedule(failing, fails, 20);
  assert.deepEqual(
    r.planned.map((p) => [p.fault, p.forMs]),
    [['kill', 1000]],
  );
  assert.ok(r.failedRuns >= 3 && r.runs >= r.failedRuns);
});

test('keeps the schedule when nothing smaller fails, and never exceeds the run bound', async () => {
  const failing = [f('latency', 0, 2000), f('kill', 1000, 4000, 'processor-1')];
  let calls = 0;
  const r = await shrinkSchedule(
    failing,
    (c) => {
      calls++;
      return Promise.resolve(c.length === 2 && c.every((p, i) => p.forMs === failing[i]!.forMs));
    },
    3,
  );
  assert.deepEqual(r.planned, failing);
  assert.equal(r.runs, 3);
  assert.equal(calls, 3);
  assert.equal(r.failedRuns, 0);
  const none = await shrinkSchedule(failing, () => Promise.resolve(true), 0);
  assert.equal(none.runs, 0);
});
