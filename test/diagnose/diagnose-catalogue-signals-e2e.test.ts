// End to end: bug switches caught by a service level, a metric or a process, each on the
// standard suite that must catch it at a fixed seed: slow ops are diagnosed like any other;
// where the finding names no op (a metric, a process) the diagnosis reads the moment the
// check's evidence gives against the faults and leadership then
// (docs/traces-and-report.md#the-catalogue-diagnosed has the table and how often each seed
// reproduces). The switches are split over three files so that each stays within a test
// file's time bound: diagnose-catalogue-{hangs,answers,signals}-e2e.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chaosSuite, namesFault, run, runUntilDiagnosed, topGroup } from './diagnose-e2e-helpers.js';

test('slow-failure-detection (leader-down): calls wait at the ingress for a leader, the kill named', async () => {
  const ran = await run('reference+bug:slow-failure-detection', await chaosSuite('leader-down.ts'), 2);
  const top = topGroup(ran, 'failoverTimeBounded');
  assert.equal(top.problem, 'slow');
  assert.match(top.service, /^ingress-\d+$/);
  assert.equal(top.span, 'ingress call');
  namesFault(top, /^kill@processor-\d+$/);
  assert.ok(
    top.leadership.some((s) => s.leaders.length === 0),
    JSON.stringify(top.leadership),
  );
});

test('pending-gauge-leak (ingress-processor-reset): a metric that lies names no op; the finding names the ingress and the reset it leaked in', async () => {
  const ran = await run(
    'reference+bug:pending-gauge-leak',
    await chaosSuite('ingress-processor-reset.ts'),
    7,
  );
  const drains = ran.verdict.checks.find((c) => c.name === 'pendingDrains');
  assert.equal(drains?.verdict, 'fail', drains?.summary);
  assert.match(drains.summary, /limbo_ingress_pending_requests/);
  // Every client was answered: nothing to diagnose op by op, but the gauge rose at a moment.
  const d = ran.verdict.diagnosis;
  assert.equal(d?.groups.length, 0, JSON.stringify(d?.groups[0]));
  const finding = d?.findings?.find((f) => f.check === 'pendingDrains');
  assert.ok(finding !== undefined, JSON.stringify(d));
  assert.match(finding.service ?? '', /^ingress-\d+$/, finding.sentence);
  assert.ok(
    // The last error answer (the leak) may come just after the heal: the reset is then the
    // fault healed last before the moment, which the sentence names with "after".
    finding.faults.some((f) => /^reset_peer@ingress-?\d*->processor-\d+$/.test(f.name)),
    finding.sentence,
  );
});

test('reply-lost-on-shutdown (rolling-restart): a stop that outlived its grace period names its processor and its restart', async () => {
  // A stop outlives its grace only when calls are in flight on the node as it stops: seeds 7-9
  // until gracefulStops fails.
  const ran = await runUntilDiagnosed(
    'reference+bug:reply-lost-on-shutdown',
    await chaosSuite('rolling-restart.ts'),
    [7, 8, 9],
    'gracefulStops',
  );
  const stops = ran.verdict.checks.find((c) => c.name === 'gracefulStops');
  assert.equal(stops?.verdict, 'fail', stops?.summary);
  const findings = ran.verdict.diagnosis?.findings?.filter((f) => f.check === 'gracefulStops') ?? [];
  assert.ok(findings.length > 0, JSON.stringify(ran.verdict.diagnosis));
  for (const f of findings) {
    assert.match(f.service ?? '', /^processor-\d+$/, f.sentence);
    assert.ok(
      f.faults.some((x) => x.name === `restart@${f.service}` && x.before !== true),
      f.sentence,
    );
  }
});

test('resend-storm (leader-kill): the storm names its partition, the leader kill it met, and that the killed node led it', async () => {
  const ran = await runUntilDiagnosed(
    'reference+bug:resend-storm',
    await chaosSuite('leader-kill.ts'),
    [7, 8, 9],
    'resendRateBounded',
  );
  const storm = ran.verdict.checks.find((c) => c.name === 'resendRateBounded');
  assert.equal(storm?.verdict, 'fail', storm?.summary);
  const f = ran.verdict.diagnosis?.findings?.find((x) => x.check === 'resendRateBounded');
  assert.ok(f !== undefined, JSON.stringify(ran.verdict.diagnosis));
  assert.ok(f.partition !== undefined, f.sentence);
  const kill = f.faults.find((x) => /^kill@processor-\d+$/.test(x.name) && x.before !== true);
  assert.ok(kill !== undefined, f.sentence);
  const killed = kill.name.slice('kill@'.length);
  assert.ok(
    f.leadership.some(
      (l) => l.partition === f.partition && l.stretches.some((s) => s.leaders.includes(killed)),
    ),
    f.sentence,
  );
});
