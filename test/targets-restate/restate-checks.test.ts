// Pure checks of what `--target restate` adds to a run's verdict: checkers whose signals the
// target lacks are skipped with its reason (and count for nothing), a suite can skip a target
// with a reason, and partitionLeadership reads the leadership timeline from the series.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCheckersOn, verdictOf } from '../../src/checkers/checker.js';
import { leadershipTimeline, partitionLeadership } from '../../src/checkers/partition-leadership.js';
import { pendingDrains } from '../../src/checkers/pending-drains.js';
import { leadershipChanged } from '../../src/checkers/leadership-changed.js';
import { metricNames } from '../../src/protocol/names.js';
import type { RunData, SeriesSample } from '../../src/run-data/run-data.js';
import { defineSuite, skipReasonFor } from '../../src/runner/suite.js';
import { restateMissingSignals } from '../../src/targets/restate/target.js';
import { noClientLeftHanging } from '../../src/checkers/no-client-left-hanging.js';

const leader = (tMs: number, partition: string, node: string, value: number): SeriesSample => ({
  service: 'leadership',
  name: metricNames.processorIsLeader,
  labels: { partition, node },
  tMs,
  value,
});

const runWith = (series: SeriesSample[]): RunData => ({
  suite: 's',
  target: 'restate',
  seed: 1,
  phases: { startedAtWall: '', healedAtMs: 1000, deadlineMs: 5000 },
  history: [],
  series,
  faults: [],
});

test('checkers whose signals restate lacks are skipped with the reason and do not count', () => {
  const missing = restateMissingSignals();
  assert.ok(missing[metricNames.ingressPendingRequests]);
  assert.equal(missing[metricNames.processorLeadershipChangesTotal], undefined, 'derived by the observer');
  const checks = runCheckersOn([pendingDrains(), leadershipChanged()], runWith([]), missing);
  assert.match(checks[0]!.skipped ?? '', /limbo_ingress_pending_requests/);
  // leadershipChanged runs (one of its signals is there) and, with no leader fault in this run,
  // finds its premise unmet: not applicable, not skipped for the signals.
  assert.match(checks[1]!.summary, /^not applicable: no leader kill/);
  assert.equal(verdictOf([checks[0]!]), 'inconclusive', 'only skipped checks: nothing was checked');
  assert.equal(
    verdictOf([checks[0]!, { name: 'x', verdict: 'pass', summary: '', evidence: { details: {} } }]),
    'pass',
  );
});

test('a check the target declares inapplicable is skipped with its reason, whatever the data', () => {
  const why = 'no idempotency keys: each retry answers with its own revision';
  const checks = runCheckersOn(
    [pendingDrains(), noClientLeftHanging()],
    runWith([]),
    {},
    { pendingDrains: why },
  );
  assert.equal(checks[0]!.skipped, why);
  assert.equal(checks[0]!.verdict, 'inconclusive');
  assert.match(checks[0]!.summary, /skipped on .*: no idempotency keys/);
  assert.equal(checks[1]!.skipped, undefined, 'the others still run');
});

test('partitionLeadership: one leader per partition passes; a partition left without one fails with its timeline', () => {
  const healthy = [
    leader(500, '0', 'node-1', 1),
    leader(500, '0', 'node-2', 0),
    leader(2000, '0', 'node-1', 0),
    leader(2000, '0', 'node-2', 1),
  ];
  const ok = partitionLeadership().check(runWith(healthy));
  assert.equal(ok.verdict, 'pass', ok.summary);
  assert.deepEqual(
    leadershipTimeline(runWith(healthy)).map((c) => c.leaders),
    [['node-1'], ['node-2']],
  );
  const stuck = [...healthy, leader(1500, '1', 'node-3', 1), leader(3000, '1', 'node-3', 0)];
  const settling = partitionLeadership().check(runWith(stuck));
  assert.equal(settling.verdict, 'pass', 'leaderless for 2 s of a 10 s bound: still electing');
  assert.match(settling.summary, /still electing/);
  const bad = partitionLeadership({ stuckAfterMs: 1000 }).check(runWith(stuck));
  assert.equal(bad.verdict, 'fail');
  assert.match(bad.summary, /partition 1 has no leader since 3\.0 s/);
  assert.ok(Array.isArray(bad.evidence.details['timeline']));
  assert.equal(partitionLeadership().check(runWith([])).verdict, 'inconclusive');
});

test('a suite says which targets it skips and why', () => {
  const base = { name: 's', why: 'w', schedule: [], expect: [noClientLeftHanging()] };
  const skips = defineSuite({ ...base, skipOn: { restate: 'no such link' } });
  assert.equal(skipReasonFor(skips, 'restate'), 'no such link');
  assert.equal(skipReasonFor(skips, 'reference'), undefined);
  const only = defineSuite({ ...base, onlyOn: { targets: ['restate'], reason: 'restate probe' } });
  assert.match(skipReasonFor(only, 'reference') ?? '', /only for restate: restate probe/);
  assert.equal(skipReasonFor(only, 'restate'), undefined);
});
