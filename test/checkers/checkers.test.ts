import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  combineVerdicts,
  exactlyOnce,
  idempotentRetriesAgree,
  leadershipChanged,
  noClientLeftHanging,
  pendingDrains,
  resendsObserved,
  runCheckers,
  checkerFactory,
  checkerNames,
} from '../../src/checkers/index.js';
import { subsetSumReachable } from '../../src/checkers/exactly-once.js';
import { RunBuilder } from '../helpers/run-data-builder.js';

test('combine: fail beats inconclusive beats pass; nothing is inconclusive', () => {
  assert.equal(combineVerdicts(['pass', 'inconclusive', 'fail', 'pass']), 'fail');
  assert.equal(combineVerdicts(['pass', 'inconclusive']), 'inconclusive');
  assert.equal(combineVerdicts(['pass', 'pass']), 'pass');
  assert.equal(combineVerdicts([]), 'inconclusive');
});

test('registry names every built-in checker and builds it with options', () => {
  assert.deepEqual(checkerNames(), [
    'acknowledgedEffectsPresent',
    'errorAnswersBounded',
    'exactlyOnce',
    'failoverTimeBounded',
    'faultsHitTraffic',
    'gracefulStops',
    'idempotentRetriesAgree',
    'keysFreeAfterHeal',
    'latencyRecovers',
    'leadershipChanged',
    'noClientLeftHanging',
    'noGhostCompletions',
    'noImpossibleErrors',
    'partitionLeadership',
    'pathCovered',
    'pendingDrains',
    'promql',
    'resendRateBounded',
    'resendsObserved',
    'serviceLevels',
    'spansEnd',
    'traces',
  ]);
  assert.equal(checkerFactory('noClientLeftHanging')?.({ withinMsAfterHeal: 1 }).name, 'noClientLeftHanging');
  assert.throws(
    () => checkerFactory('serviceLevels')?.({ failoverMs: 1 }),
    /serviceLevels needs p99DuringFaultMs/,
  );
});

test('a checker that throws fails its own check only', () => {
  const [r] = runCheckers(
    [
      {
        name: 'boom',
        check: () => {
          throw new Error('nope');
        },
      },
    ],
    new RunBuilder().run,
  );
  assert.equal(r?.verdict, 'fail');
  assert.match(r?.summary ?? '', /nope/);
});

test('noClientLeftHanging: passes when every op ends within the bound after heal', () => {
  const b = new RunBuilder();
  b.op(100, 200, 'ok');
  b.op(9000, 14_000, 'info', 'call', {}, { error: { code: 'connection_error', message: 'reset' } });
  b.op(20_000, 24_000, 'fail'); // invoked after the heal: bound counts from its own invoke
  const r = noClientLeftHanging({ withinMsAfterHeal: 5000 }).check(b.run);
  assert.equal(r.verdict, 'pass', r.summary);
});

test('noClientLeftHanging: an op open at the deadline is hung and named by invocation id', () => {
  const b = new RunBuilder();
  b.op(100, 200, 'ok');
  b.invoke(9500, 'call', {}, 'inv_0000abcd_hung1');
  b.invoke(9600, 'send', {}); // no id known
  const r = noClientLeftHanging({ withinMsAfterHeal: 5000 }).check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.deepEqual(r.evidence.invocationIds, ['inv_0000abcd_hung1']);
  assert.match(r.summary, /2 of 3 ops left hanging \(1 without a known invocation id\)/);
});

test('noClientLeftHanging: late ends and client timeouts are hangs', () => {
  const b = new RunBuilder();
  b.op(9000, 15_001, 'ok', 'call', {}, { invocationId: 'inv_late' });
  b.op(
    1000,
    4000,
    'info',
    'call',
    {},
    { invocationId: 'inv_timeout', error: { code: 'client_timeout', message: 't' } },
  );
  const r = noClientLeftHanging({ withinMsAfterHeal: 5000 }).check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.deepEqual(r.evidence.invocationIds, ['inv_late', 'inv_timeout']);
  const lenient = noClientLeftHanging({ withinMsAfterHeal: 5000, allowClientTimeouts: true }).check(b.run);
  assert.deepEqual(lenient.evidence.invocationIds, ['inv_late']);
});

test('noClientLeftHanging: no ops is inconclusive', () => {
  assert.equal(noClientLeftHanging().check(new RunBuilder().run).verdict, 'inconclusive');
});

test('pendingDrains: gauges back to 0 pass, one stuck fails, stale series are ignored', () => {
  const b = new RunBuilder();
  b.sample('ingress-1', 'limbo_ingress_pending_requests', { kind: 'call' }, [
    [9000, 5],
    [12_000, 0],
  ]);
  b.sample('processor-1', 'limbo_processor_pending_rpcs', { partition: '0' }, [[9000, 3]]); // died before heal
  b.sample('processor-2', 'limbo_processor_pending_rpcs', { partition: '0' }, [
    [11_000, 2],
    [12_000, 0],
  ]);
  assert.equal(pendingDrains().check(b.run).verdict, 'pass');
  b.sample('processor-2', 'limbo_processor_pending_rpcs', { partition: '1' }, [[12_000, 1]]);
  const r = pendingDrains().check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.equal(r.evidence.series?.[0]?.service, 'processor-2');
});

test('pendingDrains: judged at the deadline, not after the runner aborted open requests', () => {
  const b = new RunBuilder();
  b.sample('ingress-1', 'limbo_ingress_pending_requests', { kind: 'call' }, [
    [29_000, 3],
    [31_000, 0],
  ]);
  assert.equal(pendingDrains().check(b.run).verdict, 'fail');
});

test('pendingDrains: no samples is inconclusive', () => {
  assert.equal(pendingDrains().check(new RunBuilder().run).verdict, 'inconclusive');
});

test('resendsObserved: resends during a cut ingress link pass; flat counter fails; no samples inconclusive', () => {
  const b = new RunBuilder().fault({ fault: 'link-down', target: 'ingress->processor-1' });
  assert.equal(resendsObserved().check(b.run).verdict, 'inconclusive');
  b.sample('ingress-1', 'limbo_ingress_resends_total', { partition: '0', reason: 'timeout' }, [
    [1000, 4],
    [3000, 4],
    [6000, 4],
  ]);
  assert.equal(resendsObserved().check(b.run).verdict, 'fail');
  b.sample('ingress-1', 'limbo_ingress_resends_total', { partition: '1', reason: 'connection_lost' }, [
    [1000, 0],
    [4000, 2],
  ]);
  assert.equal(resendsObserved().check(b.run).verdict, 'pass');
});

test('resendsObserved: a counter reset (restart) still counts as an increase', () => {
  const b = new RunBuilder().fault({ fault: 'latency', target: 'ingress->processor-2' });
  b.sample('ingress-1', 'limbo_ingress_resends_total', { partition: '0', reason: 'timeout' }, [
    [1000, 9],
    [3000, 3],
  ]);
  assert.equal(resendsObserved().check(b.run).verdict, 'pass');
});

test('resendsObserved: faults that do not touch the ingress path are inconclusive', () => {
  const b = new RunBuilder().fault({ fault: 'latency', target: 'client->ingress' });
  assert.equal(resendsObserved().check(b.run).verdict, 'inconclusive');
});

test('leadershipChanged: only leader faults count; the controller counter moving passes', () => {
  const b = new RunBuilder().fault({ fault: 'kill', target: 'processor-2', leader: true, healedAtMs: 5000 });
  b.sample('log', 'limbo_controller_leader_changes_total', { partition: '0', reason: 'failure' }, [
    [1000, 1],
    [4000, 1],
    [9000, 1],
  ]);
  assert.equal(leadershipChanged().check(b.run).verdict, 'fail');
  b.sample('log', 'limbo_controller_leader_changes_total', { partition: '1', reason: 'failure' }, [
    [1000, 1],
    [4000, 2],
  ]);
  assert.equal(leadershipChanged().check(b.run).verdict, 'pass');
  const notLeader = new RunBuilder().fault({ fault: 'kill', target: 'processor-3' });
  assert.equal(leadershipChanged().check(notLeader.run).verdict, 'inconclusive');
});

test('leadershipChanged: a restarted process counting back up to its old value is a change', () => {
  // processor-2 led once before its restart and once after: the counter reads 1 both times.
  const b = new RunBuilder().fault({
    fault: 'restart',
    target: 'processor-2',
    leader: true,
    healedAtMs: 5000,
  });
  const became = { partition: '1', transition: 'became_leader' };
  b.sample('processor-2', 'limbo_processor_leadership_changes_total', became, [
    [1000, 1],
    [4000, 1],
    [6000, 1],
  ]);
  assert.equal(leadershipChanged().check(b.run).verdict, 'fail', 'without start times a reset is invisible');
  b.sample('processor-2', 'process_start_time_seconds', {}, [
    [1000, 1700000000],
    [4000, 1700000000],
    [6000, 1700000004],
  ]);
  assert.equal(leadershipChanged().check(b.run).verdict, 'pass');
  // Another service's restart does not count for this one's counter.
  const other = new RunBuilder().fault({
    fault: 'restart',
    target: 'processor-2',
    leader: true,
    healedAtMs: 5000,
  });
  other.sample('processor-2', 'limbo_processor_leadership_changes_total', became, [
    [1000, 1],
    [6000, 1],
  ]);
  other.sample('processor-3', 'process_start_time_seconds', {}, [
    [1000, 1],
    [6000, 2],
  ]);
  assert.equal(leadershipChanged().check(other.run).verdict, 'fail');
});

test('exactlyOnce: ok adds plus a subset of info adds pass', () => {
  const b = new RunBuilder();
  b.add(100, 200, 'ok', 'a', 2, 'k1');
  b.add(300, 400, 'info', 'a', 3, 'k2');
  b.add(500, 600, 'info', 'a', 5, 'k3');
  b.add(700, 800, 'fail', 'a', 7, 'k4');
  b.add(900, undefined, 'info', 'a', 11, 'k5'); // open at the deadline: unknown
  b.finalRead(20_000, 'a', 2 + 5 + 11);
  assert.equal(exactlyOnce().check(b.run).verdict, 'pass');
});

test('exactlyOnce: under-count (lost ok add) fails', () => {
  const b = new RunBuilder();
  b.add(100, 200, 'ok', 'a', 2, 'k1');
  b.add(300, 400, 'ok', 'a', 3, 'k2');
  b.finalRead(20_000, 'a', 2);
  const r = exactlyOnce().check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /lost/);
  assert.ok(r.evidence.invocationIds?.includes('inv_a_k2'));
});

test('exactlyOnce: over-count (a duplicate) fails, also when within the range but unreachable', () => {
  const b = new RunBuilder();
  b.add(100, 200, 'ok', 'a', 2, 'k1');
  b.add(300, 400, 'info', 'a', 3, 'k2');
  b.finalRead(20_000, 'a', 7);
  assert.match(exactlyOnce().check(b.run).summary, /twice/);
  const c = new RunBuilder();
  c.add(100, 200, 'info', 'b', 4, 'k1');
  c.add(300, 400, 'info', 'b', 4, 'k2');
  c.finalRead(20_000, 'b', 6); // 0, 4 or 8 are possible, 6 is not
  assert.equal(exactlyOnce().check(c.run).verdict, 'fail');
});

test('exactlyOnce: idempotent retries of one key are one effect', () => {
  const b = new RunBuilder();
  b.add(100, 200, 'info', 'a', 5, 'same');
  b.add(300, 400, 'ok', 'a', 5, 'same');
  b.finalRead(20_000, 'a', 5);
  assert.equal(exactlyOnce().check(b.run).verdict, 'pass');
  b.finalRead(21_000, 'a', 10);
  assert.equal(exactlyOnce().check(b.run).verdict, 'fail');
});

test('exactlyOnce: no adds or no final read is inconclusive', () => {
  assert.equal(exactlyOnce().check(new RunBuilder().run).verdict, 'inconclusive');
  const b = new RunBuilder();
  b.add(100, 200, 'ok', 'a', 1, 'k');
  assert.equal(exactlyOnce().check(b.run).verdict, 'inconclusive');
});

test('subsetSumReachable', () => {
  assert.ok(subsetSumReachable([3, 5, 11], 16));
  assert.ok(!subsetSumReachable([3, 5, 11], 15));
  assert.ok(subsetSumReachable([], 0));
  assert.ok(subsetSumReachable([0.5, 1.5], 1)); // non-integers: range check only
});

test('idempotentRetriesAgree: same key, same id and output; disagreement fails', () => {
  const b = new RunBuilder();
  const req = { path: '/Echo/echo', idempotencyKey: 'x' };
  b.op(100, 200, 'ok', 'idempotentRetry', req, {
    invocationId: 'inv_1',
    response: { status: 200, body: { a: 1 } },
  });
  b.op(300, 400, 'ok', 'idempotentRetry', req, {
    invocationId: 'inv_1',
    response: { status: 200, body: { a: 1 } },
  });
  assert.equal(idempotentRetriesAgree().check(b.run).verdict, 'pass');
  b.op(500, 600, 'ok', 'idempotentRetry', req, {
    invocationId: 'inv_2',
    response: { status: 200, body: { a: 1 } },
  });
  const r = idempotentRetriesAgree().check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.deepEqual(r.evidence.invocationIds, ['inv_1', 'inv_2']);
  assert.equal(idempotentRetriesAgree().check(new RunBuilder().run).verdict, 'inconclusive');
});
