import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseShrinkConfirm, shrinkSchedule } from '../../src/explore/shrink.js';
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

test('with --shrink-confirm a candidate is kept only when it fails k of m re-runs, within the run bound', async () => {
  const failing = [f('latency', 0, 2000), f('kill', 1000, 500, 'processor-1')];
  // The kill fails every re-run with the latency, one in two without it: flaky, so not kept at
  // 3 of 3; the latency alone never fails.
  const flaky = (): ((c: PlannedFault[]) => Promise<boolean>) => {
    let n = 0;
    return (c) => Promise.resolve(c.some((p) => p.fault === 'kill') && (c.length === 2 || n++ % 2 === 0));
  };
  const strictSteps: string[] = [];
  const strict = await shrinkSchedule(failing, flaky(), 20, (m) => strictSteps.push(m), {
    atLeast: 3,
    of: 3,
  });
  assert.equal(strict.planned.length, 2, 'the flaky smaller candidates are undone');
  // Fail, pass: settled after two re-runs.
  assert.match(strictSteps[0]!, /^shrink 1\/20: without fault 2 \(kill\): passes, undone \(failed 0 of 1\)$/);
  assert.match(
    strictSteps[1]!,
    /^shrink 3\/20: without fault 1 \(latency\): passes, undone \(failed 1 of 2\)$/,
  );
  assert.ok(strict.runs <= 20);
  const lenient = await shrinkSchedule(failing, flaky(), 20, undefined, { atLeast: 2, of: 3 });
  assert.deepEqual(
    lenient.planned.map((p) => p.fault),
    ['kill'],
  );
  // A bound too small for one candidate's m re-runs starts none.
  const steps: string[] = [];
  const bounded = await shrinkSchedule(
    failing,
    () => Promise.resolve(true),
    2,
    (m) => steps.push(m),
    {
      atLeast: 3,
      of: 3,
    },
  );
  assert.equal(bounded.runs, 0);
  const kept = await shrinkSchedule(
    failing,
    () => Promise.resolve(true),
    3,
    (m) => steps.push(m),
    {
      atLeast: 3,
      of: 3,
    },
  );
  assert.equal(kept.runs, 3);
  assert.equal(kept.planned.length, 1);
  assert.match(steps.at(-1)!, /shrink 3\/3: without fault 2 \(kill\): still fails, kept \(failed 3 of 3\)/);
});

test('--shrink-confirm reads K or k/m', () => {
  assert.deepEqual(parseShrinkConfirm('3'), { atLeast: 3, of: 3 });
  assert.deepEqual(parseShrinkConfirm('2/3'), { atLeast: 2, of: 3 });
  for (const bad of ['0', '3/2', 'x', '1/21', ''])
    assert.throws(() => parseShrinkConfirm(bad), /--shrink-confirm/);
});
