// Findings that name no op, diagnosed: the real checkers that judge a metric or a process
// (pendingDrains, leadershipChanged, gracefulStops, partitionLeadership, resendRateBounded) say
// when and where they saw it, and the diagnosis reads the faults and the leadership of that
// moment — on hand-made run data, the same way the console, the verdict and JUnit print it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatVerdict } from '../../src/cli/run.js';
import {
  gracefulStops,
  leadershipChanged,
  partitionLeadership,
  pendingDrains,
  resendRateBounded,
} from '../../src/checkers/index.js';
import { diagnose, diagnosisHeadline } from '../../src/diagnose/index.js';
import { metricNames } from '../../src/protocol/names.js';
import { toJUnitXml } from '../../src/report/junit.js';
import { buildVerdict, type CheckResult } from '../../src/run-data/verdict.js';
import { RunBuilder } from '../helpers/run-data-builder.js';

/** Every 250 ms from `fromMs` to `toMs`, the value `valueAt(t)`. */
function every250(fromMs: number, toMs: number, valueAt: (t: number) => number): [number, number][] {
  const out: [number, number][] = [];
  for (let t = fromMs; t <= toMs; t += 250) out.push([t, valueAt(t)]);
  return out;
}

function baseRun(): RunBuilder {
  const b = new RunBuilder();
  b.phases(2000, 8000, 14_000);
  b.op(100, 200, 'ok', 'call');
  // processor-1 leads partition 1 throughout; processor-2 leads partition 0.
  for (const [node, partition] of [
    ['processor-1', '1'],
    ['processor-2', '0'],
  ] as const)
    b.sample(
      node,
      metricNames.processorIsLeader,
      { partition, service: node },
      every250(0, 14_000, () => 1),
    );
  return b;
}

test('a gauge that never drained: the moment it reached the level it kept names the fault then in, and its partition’s leader', () => {
  const b = baseRun();
  b.fault({ fault: 'reset_peer', target: 'ingress->processor-1', injectedAtMs: 4900, healedAtMs: 6000 });
  b.fault({ fault: 'latency', target: 'ingress->processor-2', injectedAtMs: 9000, healedAtMs: 9500 });
  b.sample(
    'ingress-1',
    metricNames.ingressPendingRequests,
    { partition: '1' },
    every250(0, 14_000, (t) => (t < 5250 ? 0 : t < 5500 ? 5 : 3)),
  );
  const check = pendingDrains({ metrics: [metricNames.ingressPendingRequests] }).check(b.run);
  assert.equal(check.verdict, 'fail', check.summary);
  const d = diagnose(b.run, [check]);
  assert.ok(d !== undefined, 'a finding is a diagnosis even with no bad op');
  assert.equal(d.groups.length, 0);
  const f = d.findings?.[0];
  assert.ok(f !== undefined);
  assert.deepEqual(
    { check: f.check, fromMs: f.fromMs, toMs: f.toMs, service: f.service, partition: f.partition },
    { check: 'pendingDrains', fromMs: 5000, toMs: 5250, service: 'ingress-1', partition: 1 },
  );
  assert.deepEqual(
    f.faults.map((x) => x.name),
    ['reset_peer@ingress->processor-1'],
    'the later latency fault is not the cause',
  );
  assert.equal(
    f.sentence,
    'pendingDrains: limbo_ingress_pending_requests reached 3 and never drained, on ingress-1, partition 1 ' +
      'at 5.0–5.3 s; during reset_peer@ingress->processor-1 (4.9–6.0 s); partition 1: processor-1 led 4.0–5.3 s.',
  );
  // The console prints it after the checks; JUnit's failure starts with it.
  const verdict = buildVerdict(b.run, [check], { durationMs: 1, replay: 'npx limbo run x', diagnosis: d });
  const text = formatVerdict(verdict);
  assert.ok(text.indexOf(`  why: ${f.sentence}`) > text.indexOf('pendingDrains'), text);
  assert.ok(!text.includes('bad op(s)'), 'no op groups to speak of');
  assert.equal(diagnosisHeadline(d, 'pendingDrains'), `why: ${f.sentence}`);
  const xml = toJUnitXml([
    { name: 's', target: 't', seed: 1, durationMs: 1, timestamp: '', checks: [check], diagnosis: d },
  ]);
  assert.ok(
    xml.includes('<failure message="why: pendingDrains: limbo_ingress_pending_requests reached'),
    xml,
  );
});

test('a gauge back at 0 by the end: no finding, no diagnosis', () => {
  const b = baseRun();
  b.fault({ fault: 'reset_peer', target: 'ingress->processor-1', injectedAtMs: 4900, healedAtMs: 6000 });
  b.sample(
    'ingress-1',
    metricNames.ingressPendingRequests,
    {},
    every250(0, 14_000, (t) => (t > 5000 && t < 9000 ? 2 : 0)),
  );
  const check = pendingDrains({ metrics: [metricNames.ingressPendingRequests] }).check(b.run);
  assert.equal(check.verdict, 'pass');
  assert.equal(diagnose(b.run, [check]), undefined);
});

test('a leader fault that moved no leadership: the finding shows the partition its target kept leading', () => {
  const b = baseRun();
  b.fault({
    fault: 'pause',
    target: 'processor-1',
    injectedAtMs: 3000,
    healedAtMs: 6000,
    leader: true,
  });
  b.sample(
    'processor-1',
    metricNames.processorLeadershipChangesTotal,
    { partition: '1' },
    every250(0, 14_000, () => 1),
  );
  const check = leadershipChanged().check(b.run);
  assert.equal(check.verdict, 'fail', check.summary);
  const f = diagnose(b.run, [check])?.findings?.[0];
  assert.ok(f !== undefined);
  assert.equal(f.service, 'processor-1');
  assert.deepEqual(
    f.leadership.map((l) => l.partition),
    [1],
    'the partition processor-1 led, not the one processor-2 led',
  );
  assert.match(
    f.sentence,
    /^leadershipChanged: .* did not move, on processor-1 at 3\.0–11\.0 s; during pause@processor-1 \(3\.0–6\.0 s\); partition 1: processor-1 led 2\.0–11\.0 s\.$/,
  );
});

test('a stop that outlived its grace period, a partition left without a leader and a resend storm each name their moment', () => {
  const b = baseRun();
  b.fault({
    fault: 'restart',
    target: 'processor-2',
    injectedAtMs: 3000,
    healedAtMs: 7000,
    details: { stops: [{ service: 'processor-2', graceful: false, ms: 5000, graceMs: 5000 }] },
  });
  const stops = gracefulStops().check(b.run);
  assert.equal(stops.verdict, 'fail', stops.summary);
  // processor-2 never leads partition 0 again after its restart.
  b.run.series = b.run.series.filter(
    (s) => !(s.name === metricNames.processorIsLeader && s.service === 'processor-2' && s.tMs >= 3000),
  );
  b.sample(
    'processor-2',
    metricNames.processorIsLeader,
    { partition: '0', service: 'processor-2' },
    every250(3000, 14_000, () => 0),
  );
  const leaderless = partitionLeadership({ stuckAfterMs: 5000 }).check(b.run);
  assert.equal(leaderless.verdict, 'fail', leaderless.summary);
  // 40 resends a second to partition 1 from 4 s to 6 s, with one request resending.
  b.sample(
    'ingress-1',
    metricNames.ingressResendsTotal,
    { partition: '1' },
    every250(0, 14_000, (t) => (t <= 4000 ? 0 : t <= 6000 ? ((t - 4000) / 1000) * 40 : 80)),
  );
  const storm = resendRateBounded().check(b.run);
  assert.equal(storm.verdict, 'fail', storm.summary);
  const d = diagnose(b.run, [stops, leaderless, storm]);
  const byCheck = new Map((d?.findings ?? []).map((f) => [f.check, f]));
  assert.deepEqual([...byCheck.keys()].sort(), ['gracefulStops', 'partitionLeadership', 'resendRateBounded']);
  const stop = byCheck.get('gracefulStops')!;
  assert.equal(stop.service, 'processor-2');
  assert.deepEqual(
    stop.faults.map((x) => x.name),
    ['restart@processor-2'],
  );
  const gap = byCheck.get('partitionLeadership')!;
  assert.equal(gap.partition, 0);
  assert.match(
    gap.sentence,
    /no leader until the deadline, partition 0 at 3\.\d–14\.0 s; during restart@processor-2/,
  );
  const resend = byCheck.get('resendRateBounded')!;
  assert.equal(resend.partition, 1);
  assert.ok(resend.fromMs >= 2000 && resend.toMs <= 8000, `${resend.fromMs}–${resend.toMs}`);
  assert.match(resend.sentence, /^resendRateBounded: a resend storm, .*partition 1 at/);
});

test('a failed check that names ops is diagnosed by its ops, not by moments', () => {
  const b = baseRun();
  const id = 'inv_10000000_x';
  b.invoke(3000, 'call', {}, id);
  const check: CheckResult = {
    name: 'noClientLeftHanging',
    verdict: 'fail',
    summary: '1 op left hanging',
    evidence: { invocationIds: [id], moments: [{ fromMs: 3000, toMs: 4000, what: 'x' }], details: {} },
  };
  const d = diagnose(b.run, [check]);
  assert.equal(d?.groups.length, 1);
  assert.equal(d?.findings, undefined);
});
