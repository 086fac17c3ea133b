// The detection checks on hand-made run data: each passes on a healthy history and fails,
// naming the effect, on one that shows the bug family it exists for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { acknowledgedEffectsPresent } from '../../src/checkers/acknowledged-effects-present.js';
import { errorAnswersBounded } from '../../src/checkers/error-answers-bounded.js';
import { failoverTimeBounded } from '../../src/checkers/failover-time-bounded.js';
import { keysFreeAfterHeal } from '../../src/checkers/keys-free-after-heal.js';
import { latencyRecovers } from '../../src/checkers/latency-recovers.js';
import { noImpossibleErrors } from '../../src/checkers/no-impossible-errors.js';
import { pathCovered } from '../../src/checkers/path-covered.js';
import { resendRateBounded } from '../../src/checkers/resend-rate-bounded.js';
import { gracefulStops } from '../../src/checkers/graceful-stops.js';
import { checkerFactory } from '../../src/checkers/registry.js';
import { RunBuilder } from '../helpers/run-data-builder.js';
import type { CheckResult } from '../../src/checkers/checker.js';

const ok200 = { response: { status: 200 } };

function calls(b: RunBuilder, fromMs: number, toMs: number, everyMs: number, latencyMs: number): void {
  for (let t = fromMs; t < toMs; t += everyMs)
    b.op(t, t + latencyMs, 'ok', 'call', {}, { ...ok200, invocationId: `inv_${t}` });
}

test('every new check is registered by name', () => {
  for (const n of [
    'errorAnswersBounded',
    'noImpossibleErrors',
    'acknowledgedEffectsPresent',
    'resendRateBounded',
    'keysFreeAfterHeal',
    'latencyRecovers',
    'failoverTimeBounded',
    'pathCovered',
    'gracefulStops',
  ])
    assert.ok(checkerFactory(n), n);
});

test('errorAnswersBounded: a kill that turns calls into 500s fails, naming the window and share', () => {
  const good = new RunBuilder().fault({
    fault: 'kill',
    target: 'processor-1',
    injectedAtMs: 2000,
    healedAtMs: 5000,
  });
  calls(good, 0, 9000, 100, 50);
  assert.equal(errorAnswersBounded().check(good.run).verdict, 'pass');
  const bad = new RunBuilder().fault({
    fault: 'kill',
    target: 'processor-1',
    injectedAtMs: 2000,
    healedAtMs: 5000,
  });
  calls(bad, 0, 2000, 100, 50);
  for (let t = 2000; t < 4000; t += 100)
    bad.op(
      t,
      t + 50,
      'info',
      'call',
      {},
      { response: { status: 500, body: { error: 'lost' } }, invocationId: `e_${t}` },
    );
  const r = errorAnswersBounded().check(bad.run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /20 of 20 call ops .* during kill@processor-1/);
  assert.ok(r.evidence.invocationIds?.includes('e_2000'));
});

test('errorAnswersBounded: a burst of errors at one moment fails though the whole window dilutes it', () => {
  const withBurst = (errorsAtOnce: number, spreadMs: number): RunBuilder => {
    const b = new RunBuilder().fault({
      fault: 'restart',
      target: 'processor-2',
      injectedAtMs: 2000,
      healedAtMs: 3000,
    });
    // 20 clients, each a 100 ms call after another: ~20 in flight, ~1200 calls over the window.
    for (let c = 0; c < 20; c++) calls(b, c * 5, 9000, 100, 100);
    for (let i = 0; i < errorsAtOnce; i++) {
      const endMs = 2400 + i * spreadMs;
      b.op(
        endMs - 80,
        endMs,
        'info',
        'call',
        {},
        {
          response: { status: 500, body: { error: 'leadership lost' } },
          invocationId: `burst_${i}`,
        },
      );
    }
    return b;
  };
  const r = errorAnswersBounded().check(withBurst(6, 2).run);
  assert.equal(r.verdict, 'fail', r.summary);
  assert.match(
    r.summary,
    /a burst of 6 error answers at 2\.4 s during restart@processor-2: 6 of the \d+ ops in flight \(\d+\.\d %\) got 500 \(e\.g\. "leadership lost"\)/,
  );
  assert.doesNotMatch(r.summary, /call ops/, 'the whole window alone stays under 2 %');
  assert.deepEqual(r.evidence.invocationIds?.slice().sort(), [
    'burst_0',
    'burst_1',
    'burst_2',
    'burst_3',
    'burst_4',
    'burst_5',
  ]);
  // Two errors together are under the noise floor; six spread over seconds are no burst, and
  // 6 of ~1200 calls stay under the window's share.
  assert.equal(errorAnswersBounded().check(withBurst(2, 2).run).verdict, 'pass');
  const spread = errorAnswersBounded().check(withBurst(6, 500).run);
  assert.equal(spread.verdict, 'pass', spread.summary);
  // The bound is an option.
  assert.equal(errorAnswersBounded({ burstShare: 0.5 }).check(withBurst(6, 2).run).verdict, 'pass');
});

test('noImpossibleErrors: a final 404 and a 500 the cluster could have served fail', () => {
  const good = new RunBuilder();
  calls(good, 0, 5000, 100, 20);
  good.op(6000, 6010, 'info', 'call', {}, { response: { status: 504 } }); // the client's deadline: honest
  assert.equal(noImpossibleErrors().check(good.run).verdict, 'pass');
  // Answers without any HTTP status (a client adapter's) leave it nothing to read: not a pass.
  const adapter = new RunBuilder();
  for (let t = 0; t < 2000; t += 100) adapter.op(t, t + 20, 'ok', 'call', {}, { invocationId: `nats:${t}` });
  const blind = noImpossibleErrors().check(adapter.run);
  assert.equal(blind.verdict, 'inconclusive', blind.summary);
  assert.match(blind.summary, /none of the 20 client ops carried an HTTP status/);
  const bad = new RunBuilder();
  bad.op(
    100,
    200,
    'info',
    'send',
    {},
    { response: { status: 404, body: { error: 'invocation inv_x not found' } }, invocationId: 'inv_x' },
  );
  bad.op(
    300,
    400,
    'info',
    'call',
    {},
    { response: { status: 500, body: { error: 'may have gone through' } }, invocationId: 'inv_y' },
  );
  calls(bad, 500, 2000, 100, 20);
  const r = noImpossibleErrors().check(bad.run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /final 404 .*inv_x.*not found/);
  assert.match(r.summary, /500 although the cluster served calls afterwards/);
  assert.deepEqual(r.evidence.invocationIds, ['inv_x', 'inv_y']);
  // Restate's error bodies say `message`, not `error`: the verdict quotes them too.
  const restate = new RunBuilder();
  restate.op(
    100,
    200,
    'info',
    'call',
    {},
    {
      response: {
        status: 404,
        body: { code: 404, message: "service 'Counter' not found", source: 'ingress' },
      },
    },
  );
  calls(restate, 500, 2000, 100, 20);
  assert.match(noImpossibleErrors().check(restate.run).summary, /final 404 .*service 'Counter' not found/);
});

test('acknowledgedEffectsPresent: an accepted send whose attach says not found is a lost effect', () => {
  const good = new RunBuilder();
  good.op(0, 100, 'ok', 'send', {}, { ...ok200, invocationId: 'inv_a' });
  assert.equal(acknowledgedEffectsPresent().check(good.run).verdict, 'pass');
  const bad = new RunBuilder();
  bad.op(0, 100, 'ok', 'send', {}, { ...ok200, invocationId: 'inv_a' });
  bad.op(200, 300, 'info', 'send', {}, { response: { status: 404 }, invocationId: 'inv_lost' });
  const r = acknowledgedEffectsPresent().check(bad.run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /inv_lost/);
  assert.equal(acknowledgedEffectsPresent().check(new RunBuilder().run).verdict, 'inconclusive');
});

function resendRun(perSecond: number, pending: number, afterHeal = 0): RunBuilder {
  const b = new RunBuilder();
  b.run.phases.healedAtMs = 6000;
  b.run.phases.deadlineMs = 14_000;
  b.sample(
    'ingress-1',
    'limbo_ingress_resends_total',
    { partition: '0', reason: 'timeout' },
    resendCounter(perSecond, afterHeal),
  );
  b.sample(
    'ingress-1',
    'limbo_ingress_pending_requests',
    { kind: 'call' },
    grid().map((t) => [t, t >= 2000 && t < 5000 ? pending : 0]),
  );
  return b;
}

const grid = (): number[] => Array.from({ length: 57 }, (_, i) => i * 250);

/** A resend counter growing perSecond in [2000, 5000) ms and afterHeal/s from 11,500 ms. */
function resendCounter(perSecond: number, afterHeal = 0): [number, number][] {
  let total = 0;
  return grid().map((t) => {
    if (t >= 2000 && t < 5000) total += perSecond / 4;
    if (t >= 11_500) total += afterHeal / 4;
    return [t, total];
  });
}

test('resendRateBounded: backoff passes, a fixed 50 ms storm and resends that never settle fail', () => {
  assert.equal(resendRateBounded().check(resendRun(20, 10).run).verdict, 'pass');
  const storm = resendRateBounded().check(resendRun(200, 10).run);
  assert.equal(storm.verdict, 'fail');
  assert.match(
    storm.summary,
    /resend storm: 200 resends\/s to partition 0 for 10 pending requests \(20\/s each/,
  );
  const unsettled = resendRateBounded().check(resendRun(20, 10, 4).run);
  assert.equal(unsettled.verdict, 'fail');
  assert.match(unsettled.summary, /never settled/);
  assert.equal(resendRateBounded().check(new RunBuilder().run).verdict, 'inconclusive');
});

/** One ingress-1 series on the check's grid, its value at each time from `at`. */
function series(
  b: RunBuilder,
  name: string,
  labels: Record<string, string>,
  at: (t: number) => number,
): void {
  b.sample(
    'ingress-1',
    name,
    labels,
    grid().map((t) => [t, at(t)]),
  );
}

test('resendRateBounded divides by the requests resending to each partition, however briefly they resent', () => {
  // Partition 0 loses its leader: 4 requests resend 50 ms apart (80/s) while 16 requests of
  // healthy partitions are pending too. Divided by all 20 pending the storm hides (4/s each).
  const run = (
    resending: (t: number) => number,
    resent: (t: number) => number,
    perSecond = 80,
  ): RunBuilder => {
    const b = resendRun(perSecond, 20);
    series(b, 'limbo_ingress_resending_requests', { partition: '0' }, resending);
    series(b, 'limbo_ingress_resending_requests', { partition: '1' }, () => 0);
    series(b, 'limbo_ingress_resent_requests_total', { partition: '0' }, resent);
    return b;
  };
  const inOutage = (t: number): number => (t >= 2000 && t < 5000 ? 4 : 0);
  const withoutThem = resendRateBounded().check(resendRun(80, 20).run);
  assert.equal(withoutThem.verdict, 'pass', withoutThem.summary);
  const storm = resendRateBounded().check(run(inOutage, (t) => (t >= 2000 ? 4 : 0)).run);
  assert.equal(storm.verdict, 'fail', storm.summary);
  assert.match(storm.summary, /80 resends\/s to partition 0 for 4 resending requests \(20\/s each/);
  assert.equal(
    (storm.evidence.details as { dividedBy?: string }).dividedBy,
    'requests resending to the partition in the window',
  );
  // One request: resending 20/s is a storm (judged at half, 10/s); 4/s (each table change
  // waking it, each new epoch restarting its backoff) is churn, not a storm.
  const one = (perSecond: number): CheckResult =>
    resendRateBounded().check(
      run(
        (t) => (t >= 2000 && t < 5000 ? 1 : 0),
        (t) => (t >= 2000 ? 1 : 0),
        perSecond,
      ).run,
    );
  assert.equal(one(20).verdict, 'fail', one(20).summary);
  assert.match(one(20).summary, /for 2 resending requests \(10\/s each/);
  assert.equal(one(8).verdict, 'pass', one(8).summary);
  // 40 requests each resending once between two samples (a failover's NOT_LEADER answers):
  // the gauge never shows them, the resent counter does, and 40 resends by 40 requests pass.
  const b = new RunBuilder();
  b.run.phases.healedAtMs = 6000;
  b.run.phases.deadlineMs = 14_000;
  const step = (t: number): number => (t >= 2100 ? 40 : 0);
  series(b, 'limbo_ingress_resends_total', { partition: '0', reason: 'not_leader' }, step);
  series(b, 'limbo_ingress_resending_requests', { partition: '0' }, () => 0);
  series(b, 'limbo_ingress_resent_requests_total', { partition: '0' }, step);
  const once = resendRateBounded().check(b.run);
  assert.equal(once.verdict, 'pass', once.summary);
  assert.match(once.summary, /40 resends, at most 0\.5\/s per resending request/);
});

test('keysFreeAfterHeal: a key whose ops after the heal are never answered is held', () => {
  const good = new RunBuilder();
  good.add(100, 200, 'ok', 'counter-1', 1, 'k1');
  good.finalRead(31_000, 'counter-1', 1);
  assert.equal(keysFreeAfterHeal().check(good.run).verdict, 'pass');
  const bad = new RunBuilder();
  bad.add(100, 200, 'ok', 'counter-1', 1, 'k1');
  bad.add(9000, undefined, 'info', 'counter-2', 2, 'k2');
  bad.add(11_000, undefined, 'info', 'counter-2', 2, 'k3');
  bad.finalRead(31_000, 'counter-1', 1);
  const r = keysFreeAfterHeal().check(bad.run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /key counter-2 still held after the heal/);
  assert.ok(r.evidence.invocationIds?.includes('inv_counter-2_k3'));
  // The runner asks a failed final read again until one answers (for exactlyOnce's value): only
  // its first final read of a key counts here, so a key held until a later ask is still held.
  const late = new RunBuilder();
  late.add(100, 200, 'ok', 'counter-1', 1, 'k1');
  const first = late.invoke(31_000, 'counterGet', { counterKey: 'counter-1', final: true });
  late.end(first, 36_000, 'info');
  late.finalRead(45_000, 'counter-1', 1);
  const held = keysFreeAfterHeal().check(late.run);
  assert.equal(held.verdict, 'fail', held.summary);
  assert.match(held.summary, /key counter-1 still held after the heal: 1 ops on it, none answered/);
});

test('latencyRecovers: calls that stay slow after the heal are a wedge', () => {
  const mk = (afterMs: number): RunBuilder => {
    const b = new RunBuilder().fault({
      fault: 'timeout',
      target: 'ingress->processor-1',
      injectedAtMs: 2000,
      healedAtMs: 3000,
    });
    calls(b, 0, 2000, 50, 40);
    calls(b, 6000, 10_000, 50, afterMs);
    return b;
  };
  assert.equal(latencyRecovers().check(mk(60).run).verdict, 'pass');
  const r = latencyRecovers().check(mk(5000).run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /p90 latency 5000 ms from 3000 ms after timeout@ingress->processor-1 healed/);
});

test('failoverTimeBounded: ops stuck through a long leader kill fail; link faults are left out', () => {
  const mk = (latencyMs: number): RunBuilder => {
    const b = new RunBuilder().fault({
      fault: 'kill',
      target: 'processor-1',
      leader: true,
      injectedAtMs: 2000,
      healedAtMs: 12_000,
    });
    b.op(2500, 2500 + latencyMs, 'ok', 'call', {}, { ...ok200, invocationId: 'inv_slow' });
    calls(b, 0, 2000, 100, 20);
    return b;
  };
  assert.equal(failoverTimeBounded().check(mk(2000).run).verdict, 'pass');
  const r = failoverTimeBounded().check(mk(9000).run);
  assert.equal(r.verdict, 'fail');
  assert.match(
    r.summary,
    /1 ops waited more than 6000 ms through kill@processor-1 \(worst 9000 ms, inv_slow\)/,
  );
  const link = new RunBuilder().fault({ fault: 'timeout', target: 'ingress->processor-1' });
  assert.equal(failoverTimeBounded().check(link.run).verdict, 'inconclusive');
});

test('pathCovered: the counter moved, or the run proves nothing about the path', () => {
  const c = pathCovered({
    metric: 'limbo_processor_stale_proposals_dropped_total',
    what: 'stale proposals fenced',
  });
  const moved = new RunBuilder().sample(
    'processor-1',
    'limbo_processor_stale_proposals_dropped_total',
    { partition: '0' },
    [
      [0, 0],
      [5000, 3],
    ],
  );
  assert.equal(c.check(moved.run).verdict, 'pass');
  const still = new RunBuilder().sample(
    'processor-1',
    'limbo_processor_stale_proposals_dropped_total',
    { partition: '0' },
    [
      [0, 0],
      [5000, 0],
    ],
  );
  const r = c.check(still.run);
  assert.equal(r.verdict, 'inconclusive');
  assert.match(r.summary, /stale proposals fenced never happened/);
});

test('latencyRecovers: clients stuck after the heal (no new ops) are a wedge too', () => {
  const b = new RunBuilder().fault({
    fault: 'timeout',
    target: 'ingress->processor-1',
    injectedAtMs: 2000,
    healedAtMs: 3000,
  });
  calls(b, 0, 2000, 50, 40);
  b.invoke(2500, 'call', {}, 'inv_stuck1'); // made during the fault, never answered
  b.invoke(3200, 'call', {}, 'inv_stuck2');
  const r = latencyRecovers().check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.match(
    r.summary,
    /2 ops still unanswered \d+ ms past the 3000 ms recovery after timeout@ingress->processor-1 healed/,
  );
  assert.ok(r.evidence.invocationIds?.includes('inv_stuck1'));
});

test('gracefulStops: a restart whose SIGTERM had to become SIGKILL fails, naming the service', () => {
  const stop = (service: string, graceful: boolean, ms: number) => ({ service, graceful, ms, graceMs: 3000 });
  const restartOf = (b: RunBuilder, target: string, at: number, stops: unknown[]) =>
    b.fault({
      fault: 'restart',
      target,
      injectedAtMs: at,
      healedAtMs: at + 1000,
      details: { services: [target], stops },
    });
  const good = new RunBuilder();
  restartOf(good, 'processor-1', 2000, [stop('processor-1', true, 45)]);
  restartOf(good, 'processor-2', 5000, [stop('processor-2', true, 2900)]);
  const g = gracefulStops().check(good.run);
  assert.equal(g.verdict, 'pass');
  assert.match(g.summary, /all 2 graceful stops exited on SIGTERM \(slowest 2900 ms\)/);

  const bad = new RunBuilder();
  restartOf(bad, 'processor-1', 2000, [stop('processor-1', true, 45)]);
  restartOf(bad, 'processor-3', 5000, [stop('processor-3', false, 3004)]);
  const b = gracefulStops().check(bad.run);
  assert.equal(b.verdict, 'fail');
  assert.match(
    b.summary,
    /1 of 2 graceful stops had to be SIGKILLed: processor-3 still running 3000 ms after SIGTERM \(restart@processor-3\)/,
  );

  // Nothing measured (no restart, or a runtime that cannot tell): nothing to fail.
  const none = new RunBuilder().fault({ fault: 'kill', target: 'processor-1' });
  assert.equal(gracefulStops().check(none.run).verdict, 'pass');
  restartOf(none, 'processor-2', 5000, [{ service: 'processor-2' }]);
  assert.match(gracefulStops().check(none.run).summary, /no graceful stop was measured/);
});
