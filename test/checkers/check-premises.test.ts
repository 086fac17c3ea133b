// Checks whose premise a run's faults do not meet are not applicable (skipped, counted for
// nothing), and a check that stays inconclusive says why with the run's own evidence.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCheckersOn, verdictOf } from '../../src/checkers/checker.js';
import { exactlyOnce } from '../../src/checkers/exactly-once.js';
import { failoverTimeBounded } from '../../src/checkers/failover-time-bounded.js';
import { faultsHitTraffic } from '../../src/checkers/faults-hit-traffic.js';
import { latencyRecovers } from '../../src/checkers/latency-recovers.js';
import { leadershipChanged } from '../../src/checkers/leadership-changed.js';
import { noClientLeftHanging } from '../../src/checkers/no-client-left-hanging.js';
import { partitionLeadership } from '../../src/checkers/partition-leadership.js';
import { pendingDrains } from '../../src/checkers/pending-drains.js';
import { acknowledgedEffectsPresent } from '../../src/checkers/acknowledged-effects-present.js';
import { noGhostCompletions } from '../../src/checkers/no-ghost-completions.js';
import { RunBuilder } from '../helpers/run-data-builder.js';

/** A run with answered calls and only a link fault: nothing on a processor to fail over from. */
function linkFaultsOnly(): RunBuilder {
  const b = new RunBuilder().fault({ fault: 'link-down', target: 'client->ingress' });
  for (let t = 0; t < 9000; t += 100) b.op(t, t + 20, 'ok', 'call', {}, { response: { status: 200 } });
  return b;
}

test('failoverTimeBounded on a run with only link faults is not applicable: skipped with the faults, the verdict pass', () => {
  const run = linkFaultsOnly().run;
  const r = failoverTimeBounded().check(run);
  assert.ok(r.skipped !== undefined, 'skipped');
  assert.match(r.summary, /^not applicable: no fault on a processor .*link-down@client->ingress/);
  assert.equal(r.evidence.details['notApplicable'], true);
  const checks = runCheckersOn([failoverTimeBounded(), noClientLeftHanging()], run);
  assert.equal(checks[1]!.verdict, 'pass');
  assert.equal(
    verdictOf(checks),
    'pass',
    'a not-applicable check neither passes nor makes the run inconclusive',
  );
  // A run with a processor fault is judged (a check that cannot fail would pass here too).
  const killed = linkFaultsOnly().fault({ fault: 'kill', target: 'processor-1', leader: true });
  assert.equal(failoverTimeBounded().check(killed.run).skipped, undefined);
});

test('leadershipChanged without a leader fault, and fault checks on a run without faults, are not applicable', () => {
  const r = leadershipChanged().check(linkFaultsOnly().run);
  assert.match(r.skipped ?? '', /^not applicable: no leader kill, pause, restart or transfer/);
  const quiet = new RunBuilder();
  quiet.op(100, 200, 'ok');
  for (const c of [latencyRecovers(), faultsHitTraffic()]) {
    const x = c.check(quiet.run);
    assert.match(x.skipped ?? '', /^not applicable: the run injected no fault/, c.name);
  }
  // fail still beats everything, and a real inconclusive still counts.
  const bad = runCheckersOn([leadershipChanged(), exactlyOnce()], linkFaultsOnly().run);
  assert.equal(verdictOf(bad), 'inconclusive', 'exactlyOnce with no adds stays inconclusive');
});

test('exactlyOnce without a final value says what the final read answered', () => {
  const b = new RunBuilder();
  b.add(100, 200, 'ok', 'c1', 1, 'k1');
  const read = b.invoke(20_000, 'counterGet', { path: '/Counter/c1/get', counterKey: 'c1', final: true });
  b.end(read, 20_050, 'fail', {
    response: { status: 503, body: { error: 'no leader for partition 0' } },
    error: { code: 'http_status', message: 'HTTP 503' },
  });
  b.add(300, 400, 'ok', 'c2', 2, 'k2');
  const r = exactlyOnce().check(b.run);
  assert.equal(r.verdict, 'inconclusive');
  assert.match(
    r.summary,
    /c1 \(the final read answered fail 503 http_status: HTTP 503 body \{"error":"no leader for partition 0"\}\)/,
  );
  assert.match(r.summary, /c2 \(it was never read\)/);
});

test('inconclusive checks name the evidence: samples seen, heal times, what ops answered', () => {
  const b = new RunBuilder().fault({ fault: 'kill', target: 'processor-1', leader: true });
  b.sample('ingress-1', 'limbo_ingress_pending_requests', {}, [[1000, 0]]);
  const drains = pendingDrains().check(b.run);
  assert.equal(drains.verdict, 'inconclusive');
  assert.match(
    drains.summary,
    /after the final heal at 10000 ms \(1 series stopped before it, the last sample at 1000 ms\)/,
  );
  const leaders = partitionLeadership().check(b.run);
  assert.match(
    leaders.summary,
    /no samples of limbo_processor_is_leader \(the scrapes hold 1 samples of other metrics, from ingress-1\)/,
  );
  const refused = new RunBuilder();
  refused.op(100, 150, 'fail', 'call', {}, { response: { status: 500, body: 'boom' } });
  const ack = acknowledgedEffectsPresent().check(refused.run);
  assert.match(
    ack.summary,
    /of 1 client ops none ended ok \(1 failed, 0 unknown, 0 open\); the last answered fail 500 body "boom"/,
  );
});

test('noGhostCompletions with open ops and no End span counts them and the spans it had', () => {
  const b = new RunBuilder();
  b.invoke(100, 'call');
  b.op(200, 300, 'ok');
  b.run.spans = [
    {
      traceId: 't1',
      spanId: 's1',
      parentSpanId: '',
      name: 'ingress request',
      service: 'ingress',
      kind: 2,
      startMs: 200,
      endMs: 290,
      attributes: {},
      status: { code: 0, message: '' },
    },
  ];
  const r = noGhostCompletions().check(b.run);
  assert.equal(r.verdict, 'inconclusive');
  assert.match(
    r.summary,
    /^1 ops stayed open but the run has no End spans .*\(1 spans in all, 1 traces with a server span\)/,
  );
});
