// The diagnosis on hand-made run data: bad ops found from the failed checks and the history,
// where each stopped (from its spans), what it waited for, its partition's leadership and the
// faults it met; ops grouped by where they stopped, largest group first; without spans, by
// partition with the hop unknown. Also what the console and JUnit print of it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatVerdict } from '../../src/cli/run.js';
import { diagnose, diagnosisHeadline, formatDiagnosis } from '../../src/diagnose/index.js';
import { metricNames, spanAttributes as A } from '../../src/protocol/names.js';
import { toJUnitXml } from '../../src/report/junit.js';
import type { RunSpan } from '../../src/run-data/run-data.js';
import { buildVerdict, type CheckResult } from '../../src/run-data/verdict.js';
import { RunBuilder } from '../helpers/run-data-builder.js';

// Partition keys that route to partitions 0 and 2 of 3 (keys split the 2^32 space in equal ranges).
const P0 = 'inv_10000000_';
const P2 = 'inv_c0000000_';

let nextSpan = 1;
function span(
  traceId: string,
  service: string,
  name: string,
  startMs: number,
  endMs: number | null,
  attributes: RunSpan['attributes'] = {},
  parentSpanId = '',
): RunSpan {
  return {
    traceId,
    spanId: `s${nextSpan++}`,
    parentSpanId,
    name,
    service,
    kind: 0,
    startMs,
    endMs,
    attributes,
    status: { code: 0, message: '' },
  };
}

/** An op's trace: client root, the ingress's request span, then `more` under the ingress span. */
function trace(
  id: string,
  kind: string,
  partition: number,
  atMs: number,
  more: (ingressSpanId: string) => RunSpan[],
): RunSpan[] {
  const root = span(`t-${id}`, 'client', `client ${kind}`, atMs, null, { [A.invocationId]: id });
  const ingress = span(
    `t-${id}`,
    'ingress-1',
    `ingress ${kind}`,
    atMs + 1,
    null,
    { [A.invocationId]: id, [A.partition]: partition },
    root.spanId,
  );
  return [root, ingress, ...more(ingress.spanId)];
}

/**
 * A node's leadership gauges as the scraper samples them: at each point and every 250 ms from
 * its first point to 14 s, each sample holding the value of the last point at or before it.
 */
function leader(b: RunBuilder, partition: number, node: string, points: [number, number, number][]): void {
  const times = new Set(points.map(([t]) => t));
  for (let t = points[0]![0]; t <= 14_000; t += 250) times.add(t);
  const scraped = [...times]
    .sort((x, y) => x - y)
    .map((t): [number, number, number] => {
      const at = points.filter(([p]) => p <= t).pop()!;
      return [t, at[1], at[2]];
    });
  b.sample(
    node,
    metricNames.processorIsLeader,
    { partition: String(partition), service: node },
    scraped.map(([t, v]) => [t, v]),
  );
  b.sample(
    node,
    metricNames.processorLeaderEpoch,
    { partition: String(partition), service: node },
    scraped.map(([t, , e]) => [t, e]),
  );
}

function failed(name: string, invocationIds: string[]): CheckResult {
  return { name, verdict: 'fail', summary: `${name} failed`, evidence: { invocationIds, details: {} } };
}

/** A run: three sends to partition 2 hang in an ingress attempt no processor saw, while partition 2
 * has no leader (processor-1 killed 0.7-3.7 s, processor-2 leads from 5.1 s); one call hangs in a
 * processor submit on partition 0 after processor-1 is back; one call is slow; one ok op is not named. */
function sampleRun(): { b: RunBuilder; checks: CheckResult[]; hung: string[]; slow: string } {
  const b = new RunBuilder();
  b.phases(0, 8000, 14_000);
  b.fault({ fault: 'kill', target: 'processor-1', injectedAtMs: 700, healedAtMs: 3700 });
  b.fault({ fault: 'latency', target: 'ingress->processor-2', injectedAtMs: 9000, healedAtMs: 9500 });
  leader(b, 2, 'processor-1', [
    [250, 1, 1],
    [500, 1, 1],
    [750, 0, 1],
  ]);
  leader(b, 2, 'processor-2', [
    [250, 0, 0],
    [750, 0, 0],
    [5100, 1, 2],
  ]);
  leader(b, 0, 'processor-1', [
    [250, 1, 1],
    [12_000, 1, 1],
  ]);
  leader(b, 1, 'processor-2', [[250, 1, 1]]);
  const spans: RunSpan[] = [];
  const hung: string[] = [];
  for (const i of [1, 2, 3]) {
    const id = `${P2}send${i}`;
    hung.push(id);
    const opId = b.invoke(1000 + i * 100, 'send', {}, id);
    b.run.history.find((o) => o.opId === opId)!.traceId = `t-${id}`;
    spans.push(
      ...trace(id, 'send', 2, 1000 + i * 100, (parent) => [
        span(
          `t-${id}`,
          'ingress-1',
          'ingress submit attempt',
          1010 + i * 100,
          1500 + i * 100,
          { [A.partition]: 2, [A.attempt]: 1, [A.leaderEpoch]: 1 },
          parent,
        ),
        span(
          `t-${id}`,
          'ingress-1',
          'ingress submit attempt',
          5200,
          null,
          { [A.partition]: 2, [A.attempt]: 2, [A.leaderEpoch]: 2 },
          parent,
        ),
      ]),
    );
  }
  const callId = `${P0}call1`;
  hung.push(callId);
  const callOp = b.invoke(4000, 'call', {}, callId);
  b.run.history.find((o) => o.opId === callOp)!.traceId = `t-${callId}`;
  spans.push(
    ...trace(callId, 'call', 0, 4000, (parent) => {
      const attempt = span(
        `t-${callId}`,
        'ingress-1',
        'ingress submit attempt',
        4010,
        null,
        { [A.partition]: 0, [A.attempt]: 1, [A.leaderEpoch]: 1 },
        parent,
      );
      return [
        attempt,
        span(
          `t-${callId}`,
          'processor-1',
          'processor submit',
          4020,
          null,
          { [A.partition]: 0, [A.leaderEpoch]: 1, [A.node]: 'processor-1' },
          attempt.spanId,
        ),
        span(`t-${callId}`, 'processor-1', 'apply invoke', 4100, 4100, { [A.partition]: 0 }),
      ];
    }),
  );
  const slow = `${P0}slow`;
  b.op(9100, 12_500, 'ok', 'call', {}, { invocationId: slow });
  b.op(100, 200, 'ok', 'call', {}, { invocationId: `${P0}fine` });
  b.run.spans = spans;
  const checks: CheckResult[] = [
    failed('noClientLeftHanging', hung),
    failed('serviceLevels', [slow]),
    { name: 'noImpossibleErrors', verdict: 'pass', summary: 'ok', evidence: { details: {} } },
  ];
  return { b, checks, hung, slow };
}

test('ops are grouped by where they stopped, largest group first, each with its leadership, faults and sentence', () => {
  const { b, checks } = sampleRun();
  const d = diagnose(b.run, checks);
  assert.ok(d);
  assert.equal(d.badOps, 5);
  assert.equal(d.traced, true);
  assert.deepEqual(
    d.groups.map((g) => [g.key, g.count, g.problem]),
    [
      ['ingress-1 / ingress submit attempt / partition 2', 3, 'left hanging'],
      ['processor-1 / processor submit / partition 0', 1, 'left hanging'],
      ['unknown / unknown / partition 0 / slow', 1, 'slow'],
    ],
  );
  const top = d.groups[0]!;
  assert.deepEqual(top.kinds, { send: 3 });
  assert.equal(top.waitingFor, "partition 2's submit reply (attempt 2 at epoch 2, no processor span for it)");
  assert.deepEqual(
    top.faults.map((f) => f.name),
    ['kill@processor-1'],
  );
  assert.deepEqual(
    top.leadership.map((s) => [s.fromMs, s.toMs, s.leaders, s.epoch]),
    [
      [250, 750, ['processor-1'], 1],
      [750, 5100, [], undefined],
      [5100, 14_000, ['processor-2'], 2],
    ],
  );
  assert.equal(
    top.sentence,
    '3 sends left hanging, stopped at ingress-1 in "ingress submit attempt" (partition 2) waiting for ' +
      "partition 2's submit reply (attempt 2 at epoch 2, no processor span for it); partition 2: " +
      'processor-1 led 0.3–0.8 s, epoch 1, then no leader 0.8–5.1 s, then processor-2 led 5.1–14.0 s, epoch 2; ' +
      'during kill@processor-1 (0.7–3.7 s).',
  );
  const call = d.groups[1]!;
  assert.equal(call.waitingFor, "partition 0's invocation to be applied on processor-1 at epoch 1");
  assert.deepEqual(call.lastHop, {
    service: 'processor-1',
    span: 'apply invoke',
    fromMs: 4100,
    toMs: 4100,
    count: 1,
  });
  assert.match(
    call.sentence,
    /after kill@processor-1 \(0\.7–3\.7 s\); processor-1 applied its Invoke at 4\.1 s\.$/,
  );
  // The slow call has no spans: its hop is unknown; the fault it lived through is named.
  const slow = d.groups[2]!;
  assert.match(
    slow.sentence,
    /^1 call slow on partition 0, hop unknown \(no spans of these ops\); .*during latency@ingress->processor-2 \(9\.0–9\.5 s\)\.$/,
  );
  // One op at a time, with what named it.
  const op = d.ops.find((o) => o.invocationId === `${P2}send1`)!;
  assert.deepEqual(op.checks, ['noClientLeftHanging', 'open at the deadline']);
  assert.equal(op.stop?.span, 'ingress submit attempt');
  assert.equal(op.stop?.endMs, null);
  assert.equal(op.lastHop?.atMs, 5200);
});

test('a fault that strikes the service holding a hung op after its last hop is one it met; a later one elsewhere is not', () => {
  const { b, checks } = sampleRun();
  // The hung call's last hop is processor-1 applying its Invoke at 4.1 s; processor-1 is paused
  // at 6 s, after that hop, while the call still waits. The latency at 9 s is on another link.
  b.fault({ fault: 'pause', target: 'processor-1', injectedAtMs: 6000, healedAtMs: 6500 });
  const d = diagnose(b.run, checks);
  const call = d?.groups.find((g) => g.key === 'processor-1 / processor submit / partition 0');
  assert.ok(call);
  assert.deepEqual(
    call.faults.map((f) => f.name),
    ['pause@processor-1'],
  );
});

test('a span a killed process began after the kill was sent, before its heal, is abandoned: the op waits at its caller', () => {
  const { b, checks } = sampleRun();
  // processor-1 is killed at 0.7 s; it lives on for a moment and opens an append at 0.72 s.
  const id = `${P0}late`;
  const opId = b.invoke(600, 'call', {}, id);
  b.run.history.find((o) => o.opId === opId)!.traceId = `t-${id}`;
  b.run.spans!.push(
    ...trace(id, 'call', 0, 600, (parent) => [
      span(`t-${id}`, 'processor-1', 'log append end', 720, null, { [A.partition]: 0 }, parent),
    ]),
  );
  const d = diagnose(b.run, [...checks, failed('noClientLeftHanging', [id])]);
  const op = d?.ops.find((o) => o.invocationId === id);
  assert.equal(op?.stop?.service, 'ingress-1');
  assert.equal(op?.stop?.span, 'ingress call');
  assert.equal(op?.lastHop?.service, 'processor-1');
});

test('without spans every hop is unknown: ops are grouped by partition from their ids, with leadership and faults', () => {
  // A hung op without spans is judged over its whole life, to the deadline: both faults.
  const { b, checks } = sampleRun();
  delete b.run.spans;
  const d = diagnose(b.run, checks)!;
  assert.equal(d.traced, false);
  assert.deepEqual(
    d.groups.map((g) => [g.key, g.count]),
    [
      ['unknown / unknown / partition 2 / left hanging', 3],
      ['unknown / unknown / partition 0 / left hanging', 1],
      ['unknown / unknown / partition 0 / slow', 1],
    ],
  );
  const top = d.groups[0]!;
  assert.equal(top.service, 'unknown');
  assert.match(
    top.sentence,
    /^3 sends left hanging on partition 2, hop unknown \(the run has no spans\); partition 2: .*no leader 0\.8–5\.1 s.*; during kill@processor-1 \(0\.7–3\.7 s\), latency@ingress->processor-2 \(9\.0–9\.5 s\)\.$/,
  );
});

test('no failed check, or none naming an op and no op open: no diagnosis', () => {
  const { b } = sampleRun();
  assert.equal(
    diagnose(b.run, [{ name: 'x', verdict: 'pass', summary: '', evidence: { details: {} } }]),
    undefined,
  );
  const quiet = new RunBuilder();
  quiet.op(0, 10, 'ok');
  assert.equal(diagnose(quiet.run, [failed('pendingDrains', [])]), undefined);
});

test('the console prints the top groups after the checks; JUnit failures start with the group that check named', () => {
  const { b, checks } = sampleRun();
  const diagnosis = diagnose(b.run, checks)!;
  const verdict = buildVerdict(b.run, checks, { durationMs: 1, replay: 'npx limbo run x', diagnosis });
  assert.equal(verdict.diagnosis, diagnosis);
  const text = formatVerdict(verdict);
  const why = text.indexOf('  why: 5 bad op(s) in 3 group(s) by where they stopped');
  assert.ok(why > text.indexOf('serviceLevels'), text);
  assert.ok(text.includes(`    - ${diagnosis.groups[0]!.sentence}`), text);
  assert.deepEqual(formatDiagnosis(diagnosis, 1).slice(-1), [
    '    … 2 more group(s), 2 op(s): verdict.json "diagnosis"',
  ]);
  const xml = toJUnitXml([
    { name: 's', target: 't', seed: 1, durationMs: 1, timestamp: '', checks, diagnosis },
  ]);
  assert.ok(xml.includes('<failure message="why: 3 sends left hanging, stopped at ingress-1'), xml);
  // serviceLevels named only the slow call: its failure leads with that call's group.
  assert.equal(
    diagnosisHeadline(diagnosis, 'serviceLevels'),
    `why: ${diagnosis.groups[2]!.sentence} (+2 more group(s))`,
  );
  assert.ok(xml.includes(`<failure message="why: 1 call slow on partition 0`), xml);
  // A passing run's verdict has no diagnosis field at all.
  assert.equal('diagnosis' in buildVerdict(b.run, [], { durationMs: 1, replay: '' }), false);
});

test('an op answered with an error stops at the reply its answer came from, not at a span that failed before it asked', () => {
  const b = new RunBuilder();
  const id = `${P0}attached`;
  const t = `t-${id}`;
  // A send accepted by processor-2, whose handler run fails when processor-2 loses leadership;
  // the client then attaches, and processor-1, not yet caught up, replies "notFound" (in a trace
  // of its own: only the invocation id ties it to the op): the client gets a 404.
  const opId = b.invoke(1000, 'send', {}, id);
  b.end(opId, 1510, 'info', {
    invocationId: id,
    response: { status: 404 },
    error: { code: 'http_status', message: 'HTTP 404' },
  });
  b.run.history.find((o) => o.opId === opId && o.type === 'invoke')!.traceId = t;
  const client = span(t, 'client', 'client send', 1000, 1510, { [A.invocationId]: id });
  client.status = { code: 2, message: 'HTTP 404' };
  const send = span(t, 'ingress-1', 'ingress send', 1001, 1080, { [A.partition]: 0 }, client.spanId);
  const submit = span(t, 'processor-2', 'processor submit', 1010, 1070, { [A.partition]: 0 }, send.spanId);
  const run = span(t, 'processor-2', 'invoke Sleep/sleep', 1070, 1110, { [A.partition]: 0 }, submit.spanId);
  run.status = { code: 2, message: 'leadership lost before the End was proposed' };
  const attach = span(t, 'ingress-1', 'ingress attach', 1420, 1500, { [A.partition]: 0 }, client.spanId);
  const attempt = span(t, 'ingress-1', 'ingress get_output attempt', 1421, 1470, {}, attach.spanId);
  const reply = span('t-other', 'processor-1', 'processor get_output', 1460, 1461, {
    [A.invocationId]: id,
    [A.partition]: 0,
    [A.reply]: 'notFound',
  });
  b.run.spans = [client, send, submit, run, attach, attempt, reply];
  const d = diagnose(b.run, [failed('noImpossibleErrors', [id])]);
  const op = d?.ops[0];
  assert.equal(op?.stop?.service, 'processor-1');
  assert.equal(op?.stop?.span, 'processor get_output');
  assert.equal(op?.endedWith, 'a "notFound" reply');
  assert.match(
    d!.groups[0]!.sentence,
    /^1 send answered with an impossible error: their answer came from processor-1 "processor get_output" \(partition 0\), which failed with a "notFound" reply;/,
  );
  // The attach's span ends a moment after the client saw the answer (two processes' clocks): it
  // is still the request that carried the answer.
  attach.endMs = 1515;
  const skewed = diagnose(b.run, [failed('noImpossibleErrors', [id])]);
  assert.equal(skewed?.ops[0]?.stop?.span, 'processor get_output');
  assert.equal(skewed?.ops[0]?.endedWith, 'a "notFound" reply');
  // A failed span on the answer's path is still where it stopped (the attempt that was not resent).
  attempt.status = { code: 2, message: 'lost_leadership' };
  const again = diagnose(b.run, [failed('noImpossibleErrors', [id])]);
  assert.equal(again?.ops[0]?.stop?.span, 'ingress get_output attempt');
  assert.equal(again?.ops[0]?.endedWith, 'lost_leadership');
});

test('a named invocation whose client gave up and retried it: the retry is the bad op, not the request given up on', () => {
  const { b } = sampleRun();
  const id = `${P0}retried`;
  // The client gives up after 40 ms, before its request reached the ingress, and retries under
  // the same key (same invocation id); the retry hangs in processor-1's submit.
  const first = b.invoke(6000, 'call', {}, id);
  b.end(first, 6040, 'info', { invocationId: id, error: { code: 'aborted', message: 'the client gave up' } });
  b.run.history.find((o) => o.opId === first && o.type === 'invoke')!.traceId = `t-${id}`;
  const retry = b.invoke(6040, 'call', {}, id);
  b.run.history.find((o) => o.opId === retry)!.traceId = `t-${id}`;
  const root = span(`t-${id}`, 'client', 'client call', 6000, 6040, { [A.invocationId]: id });
  b.run.spans!.push(
    root,
    ...trace(id, 'call', 0, 6040, (parent) => [
      span(`t-${id}`, 'processor-1', 'processor submit', 6100, null, { [A.partition]: 0 }, parent),
    ]),
  );
  const d = diagnose(b.run, [failed('noClientLeftHanging', [id])])!;
  const ops = d.ops.filter((o) => o.invocationId === id);
  assert.deepEqual(
    ops.map((o) => [o.opId, o.stop?.service, o.stop?.span]),
    [[retry, 'processor-1', 'processor submit']],
  );
  // Given up on and never retried: that op is the one named.
  const alone = new RunBuilder();
  alone.op(
    100,
    140,
    'info',
    'call',
    {},
    { invocationId: id, error: { code: 'aborted', message: 'gave up' } },
  );
  assert.deepEqual(
    diagnose(alone.run, [failed('noClientLeftHanging', [id])])?.ops.map((o) => o.invocationId),
    [id],
  );
});

test('an op whose client timed out got no answer: it stops where it waited, not at an attempt that failed before', () => {
  const b = new RunBuilder();
  const id = `${P0}timedout`;
  const t = `t-${id}`;
  const opId = b.invoke(1000, 'call', {}, id);
  b.end(opId, 6000, 'info', { invocationId: id, error: { code: 'client_timeout', message: 'timed out' } });
  b.run.history.find((o) => o.opId === opId && o.type === 'invoke')!.traceId = t;
  // The first attempt is refused (not leader); the resend waits on a processor past the timeout.
  const client = span(t, 'client', 'client call', 1000, 6000, { [A.invocationId]: id });
  const call = span(t, 'ingress-1', 'ingress call', 1001, null, { [A.partition]: 0 }, client.spanId);
  const refused = span(t, 'ingress-1', 'ingress submit attempt', 1002, 1010, {}, call.spanId);
  refused.status = { code: 2, message: 'not_leader' };
  const resend = span(t, 'ingress-1', 'ingress submit attempt', 1100, null, { [A.attempt]: 2 }, call.spanId);
  const submit = span(t, 'processor-2', 'processor submit', 1105, null, { [A.partition]: 0 }, resend.spanId);
  b.run.spans = [client, call, refused, resend, submit];
  const op = diagnose(b.run, [failed('noClientLeftHanging', [id])])?.ops[0];
  assert.equal(op?.problem, 'left hanging');
  assert.equal(op?.stop?.service, 'processor-2');
  assert.equal(op?.stop?.span, 'processor submit');
  assert.equal(op?.endedWith, undefined);
});

test('a slow op whose processor was killed under it waited at the ingress afterwards, not in the killed span', () => {
  const b = new RunBuilder();
  b.phases(0, 16_000, 20_000);
  b.fault({ fault: 'kill', target: 'processor-1', injectedAtMs: 4300, healedAtMs: 16_000 });
  const id = `${P0}slowkill`;
  b.op(4000, 14_000, 'ok', 'call', {}, { invocationId: id });
  for (const o of b.run.history) o.traceId = `t-${id}`;
  b.run.spans = trace(id, 'call', 0, 4000, (parent) => {
    const first = span(
      `t-${id}`,
      'ingress-1',
      'ingress submit attempt',
      4010,
      4500,
      { [A.partition]: 0 },
      parent,
    );
    return [
      first,
      // Open for ever: processor-1 was killed at 4.3 s with it in flight.
      span(`t-${id}`, 'processor-1', 'processor submit', 4020, null, { [A.partition]: 0 }, first.spanId),
      span(`t-${id}`, 'ingress-1', 'ingress submit attempt', 13_000, 13_900, { [A.partition]: 0 }, parent),
    ];
  });
  // The client's and the ingress's request spans ended with the answer.
  for (const s of b.run.spans) if (s.name === 'client call' || s.name === 'ingress call') s.endMs = 14_000;
  const d = diagnose(b.run, [failed('serviceLevels', [id])]);
  const g = d?.groups[0];
  assert.deepEqual([g?.service, g?.span, g?.problem], ['ingress-1', 'ingress call', 'slow'], g?.sentence);
});

test("an op with only its client's span waited for the system's answer: no ingress is assumed", () => {
  // A declared target exports no spans: the op's own client span is the only hop there is.
  const { b, checks } = sampleRun();
  b.run.spans = (b.run.spans ?? []).filter((s) => s.service === 'client');
  const d = diagnose(b.run, checks)!;
  const top = d.groups[0]!;
  assert.equal(top.service, 'client');
  assert.equal(top.waitingFor, "the system's answer (no span past the client for this op)");
  assert.doesNotMatch(top.sentence, /ingress/);
});
