// The trace checks on hand-made spans: each passes on a healthy picture and fails, naming the
// span, on a broken one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunSpan } from '../../src/run-data/run-data.js';
import {
  checkerFactory,
  noGhostCompletions,
  selectSpans,
  spansEnd,
  traces,
} from '../../src/checkers/index.js';
import { RunBuilder } from '../helpers/run-data-builder.js';

let n = 0;
function span(o: Partial<RunSpan> & Pick<RunSpan, 'name' | 'service' | 'traceId' | 'startMs'>): RunSpan {
  return {
    spanId: (++n).toString(16).padStart(16, '0'),
    parentSpanId: '',
    kind: 1,
    endMs: o.startMs + 10,
    attributes: {},
    status: { code: 0, message: '' },
    ...o,
  };
}

/** A call op traced as trace `t`: client root, ingress, processor spans; returns the builder. */
function callWithSpans(
  b: RunBuilder,
  t: string,
  inv: string,
  fromMs: number,
  toMs: number | undefined,
  extra: RunSpan[] = [],
): void {
  const id = b.invoke(fromMs, 'call', {}, inv);
  const op = b.run.history.find((o) => o.opId === id)!;
  op.traceId = t;
  if (toMs !== undefined) b.end(id, toMs, 'ok', { invocationId: inv });
  const root = span({
    name: 'client call',
    service: 'client',
    traceId: t,
    startMs: fromMs,
    endMs: toMs ?? null,
    attributes: { 'limbo.invocation.id': inv },
  });
  if (toMs === undefined) root.open = { cause: 'open', reason: 'still open at heal + 20.0 s' };
  b.run.spans ??= [];
  b.run.spans.push(
    root,
    span({
      name: 'ingress call',
      service: 'ingress-1',
      traceId: t,
      parentSpanId: root.spanId,
      startMs: fromMs + 1,
      endMs: toMs ?? null,
      attributes: { 'limbo.invocation.id': inv },
      ...(toMs === undefined
        ? { open: { cause: 'open' as const, reason: 'still open at heal + 20.0 s' } }
        : {}),
    }),
    span({
      name: 'apply end',
      service: 'processor-2',
      traceId: t,
      startMs: fromMs + 5,
      endMs: fromMs + 5,
      attributes: { 'limbo.invocation.id': inv, 'limbo.leader.epoch': 3, 'limbo.lsn': 7 },
    }),
    ...extra,
  );
}

test('noGhostCompletions passes when every End reached its client', () => {
  const b = new RunBuilder();
  callWithSpans(b, 't1', 'inv_a', 1000, 1100);
  callWithSpans(b, 't2', 'inv_b', 2000, 2100);
  const r = noGhostCompletions().check(b.run);
  assert.equal(r.verdict, 'pass', r.summary);
});

test('noGhostCompletions names a ghost completion: the End applied, the client still waiting', () => {
  const b = new RunBuilder();
  callWithSpans(b, 't1', 'inv_a', 1000, 1100);
  callWithSpans(b, 't2', 'inv_lost', 4200, undefined);
  const r = noGhostCompletions().check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.match(
    r.summary,
    /ghost completion: inv_lost — End applied on processor-2 \(epoch 3\) at 4\.2 s \(span "apply end" [0-9a-f]{16} on processor-2\)/,
  );
  assert.deepEqual(r.evidence.invocationIds, ['inv_lost']);
  assert.deepEqual(r.evidence.traceIds, ['t2']);
});

test('noGhostCompletions: an End the log took from a leader killed before it applied it is a ghost completion too', () => {
  const b = new RunBuilder();
  const id = b.invoke(1000, 'call', {}, 'inv_k');
  b.run.history.find((o) => o.opId === id)!.traceId = 'tk';
  const proposal = span({
    name: 'log append end',
    service: 'processor-1',
    traceId: 'tk',
    startMs: 1200,
    endMs: null,
    attributes: { 'limbo.invocation.id': 'inv_k', 'limbo.leader.epoch': 1 },
    open: { cause: 'killed', reason: 'never ended — processor-1 was killed at 1.3 s', atMs: 1300 },
  });
  b.run.spans = [
    span({ name: 'client call', service: 'client', traceId: 'tk', startMs: 1000, endMs: null }),
    proposal,
    span({
      name: 'log append',
      service: 'log',
      traceId: 'tk',
      parentSpanId: proposal.spanId,
      startMs: 1250,
      endMs: 1350,
    }),
  ];
  const r = noGhostCompletions().check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.match(
    r.summary,
    /ghost completion: inv_k — End taken by the log from processor-1 \(epoch 1\) at 1\.4 s \(span "log append" [0-9a-f]{16} on log\)/,
  );
  // The same append refused by the log (an error) proves nothing.
  b.run.spans[2]!.status = { code: 2, message: 'E_FENCED' };
  assert.notEqual(noGhostCompletions().check(b.run).verdict, 'fail');
});

test('noGhostCompletions on a target without spans: the server status of a hung invocation', () => {
  const b = new RunBuilder();
  b.run.target = 'restate';
  const hung = b.invoke(1000, 'call', {}, 'inv_r1');
  b.invoke(1000, 'call', {}, 'inv_r2');
  b.op(0, 10, 'ok', 'call', {}, { invocationId: 'inv_ok' });
  b.run.spans = [span({ name: 'client call', service: 'client', traceId: 't', startMs: 0 })];
  b.run.serverInvocations = { inv_r2: { status: 'running', source: 'restate sys_invocation' } };
  let r = noGhostCompletions().check(b.run);
  assert.equal(r.verdict, 'pass', r.summary);
  b.run.serverInvocations.inv_r1 = { status: 'completed', source: 'restate sys_invocation' };
  r = noGhostCompletions().check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.match(
    r.summary,
    /ghost completion: inv_r1 — restate sys_invocation says it completed; the client was still waiting/,
  );
  assert.deepEqual(r.evidence.invocationIds, ['inv_r1']);
  assert.ok(hung > 0);
});

test('noGhostCompletions flags a client ok with no server span, and two End spans for one invocation', () => {
  const b = new RunBuilder();
  callWithSpans(b, 't1', 'inv_a', 1000, 1100);
  const id = b.invoke(3000, 'call', {}, 'inv_nowhere');
  b.run.history.find((o) => o.opId === id)!.traceId = 't9';
  b.end(id, 3100, 'ok', { invocationId: 'inv_nowhere' });
  b.run.spans!.push(span({ name: 'client call', service: 'client', traceId: 't9', startMs: 3000 }));
  let r = noGhostCompletions().check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /1 client ok with no server span/);

  const c = new RunBuilder();
  callWithSpans(c, 't1', 'inv_twice', 1000, 1100, [
    span({
      name: 'apply end',
      service: 'processor-1',
      traceId: 't1',
      startMs: 1050,
      attributes: { 'limbo.invocation.id': 'inv_twice', 'limbo.leader.epoch': 4, 'limbo.lsn': 12 },
    }),
  ]);
  r = noGhostCompletions().check(c.run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /1 invocation\(s\) with two End spans/);
  // The same End applied twice (a new leader catching up on the same record) is not two Ends.
  const d = new RunBuilder();
  callWithSpans(d, 't1', 'inv_once', 1000, 1100, [
    span({
      name: 'apply end',
      service: 'processor-1',
      traceId: 't1',
      startMs: 1050,
      attributes: { 'limbo.invocation.id': 'inv_once', 'limbo.lsn': 7 },
    }),
  ]);
  assert.equal(noGhostCompletions().check(d.run).verdict, 'pass');
});

test('a run without spans skips every trace check; one without server spans skips noGhostCompletions', () => {
  const b = new RunBuilder();
  b.op(0, 10, 'ok');
  for (const c of [noGhostCompletions(), spansEnd(), traces({ select: {}, expect: { count: { min: 1 } } })]) {
    const r = c.check(b.run);
    assert.equal(r.verdict, 'inconclusive', c.name);
    assert.match(r.skipped ?? '', /no spans/);
  }
  b.run.spans = [span({ name: 'client call', service: 'client', traceId: 't', startMs: 0 })];
  assert.match(noGhostCompletions().check(b.run).skipped ?? '', /no server spans/);
});

test('spansEnd passes when spans end, lists abandoned spans of killed processes, fails on an open one', () => {
  const b = new RunBuilder();
  callWithSpans(b, 't1', 'inv_a', 1000, 1100);
  b.run.spans!.push(
    span({
      name: 'invoke Sleep/sleep',
      service: 'processor-1',
      traceId: 't1',
      startMs: 1002,
      endMs: null,
      attributes: { 'limbo.invocation.id': 'inv_a' },
      open: { cause: 'killed', reason: 'never ended — processor-1 was killed at 1.0 s', atMs: 1003 },
    }),
  );
  let r = spansEnd().check(b.run);
  assert.equal(r.verdict, 'pass', r.summary);
  assert.match(r.summary, /1 abandoned by killed processes/);

  callWithSpans(b, 't2', 'inv_hung', 2000, undefined);
  r = spansEnd({ withinMsAfterHeal: 5000 }).check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.match(
    r.summary,
    /2 invocation spans still open after heal \+ 5000 ms; first: client "client call" — still open at heal \+ 20\.0 s/,
  );
  assert.deepEqual(r.evidence.invocationIds, ['inv_hung']);
});

test('spansEnd fails on a span that ended only after heal + Δ', () => {
  const b = new RunBuilder();
  callWithSpans(b, 't1', 'inv_slow', 9000, 9100);
  b.run.spans!.push(
    span({
      name: 'processor submit',
      service: 'processor-3',
      traceId: 't1',
      startMs: 9001,
      endMs: 16_000,
      attributes: { 'limbo.invocation.id': 'inv_slow' },
    }),
  );
  const r = spansEnd({ withinMsAfterHeal: 5000 }).check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /processor-3 "processor submit"/);
});

test('the selector: service wildcards, attributes, child of, in the trace of an op, during a fault', () => {
  const b = new RunBuilder();
  b.run.faults.push({
    fault: 'latency',
    target: 'processor-1->log',
    affects: ['processor-1->log'],
    injectedAtMs: 3000,
    healedAtMs: 6000,
  });
  callWithSpans(b, 't1', 'inv_a', 1000, 1100);
  callWithSpans(b, 't2', 'inv_b', 4000, 4500);
  callWithSpans(b, 't3', 'inv_c', 7000, undefined);
  assert.equal(selectSpans(b.run, { service: 'processor-*' }).length, 3);
  assert.equal(selectSpans(b.run, { service: ['client', 'ingress-1'] }).length, 6);
  assert.equal(selectSpans(b.run, { attributes: { 'limbo.leader.epoch': 3 } }).length, 3);
  assert.deepEqual(
    selectSpans(b.run, { childOf: { service: 'client' } }).map((s) => s.traceId),
    ['t1', 't2', 't3'],
  );
  assert.deepEqual(
    selectSpans(b.run, { during: { fault: 'latency' }, service: 'client' }).map((s) => s.traceId),
    ['t2'],
  );
  assert.deepEqual(
    selectSpans(b.run, { inTraceOf: { outcome: 'open' }, name: 'apply end' }).map((s) => s.traceId),
    ['t3'],
  );
  assert.deepEqual(selectSpans(b.run, { startedDuring: { phase: 'converge' } }).length, 0);
  assert.deepEqual(
    selectSpans(b.run, { during: { afterHealMs: 5000 } }).map((s) => s.name),
    ['client call', 'ingress call'],
  );
  assert.deepEqual(selectSpans(b.run, { open: true }).length, 2);
});

test('traces({select, expect}): count, duration and status, with the span named on failure', () => {
  const b = new RunBuilder();
  callWithSpans(b, 't1', 'inv_a', 1000, 1100);
  b.run.spans!.push(
    span({
      name: 'log append',
      service: 'log',
      traceId: 't1',
      startMs: 1003,
      endMs: 1803,
      status: { code: 2, message: 'E_FENCED' },
    }),
  );
  const ok = traces({
    name: 'appendSpans',
    select: { service: 'log' },
    expect: { count: { equals: 1 } },
  }).check(b.run);
  assert.equal(ok.verdict, 'pass', ok.summary);
  assert.equal(ok.name, 'appendSpans');
  const slow = traces({
    select: { service: 'log', name: 'log append' },
    expect: { durationMs: { max: 500 } },
  }).check(b.run);
  assert.equal(slow.verdict, 'fail');
  assert.match(slow.summary, /log "log append" \(span [0-9a-f]{16}, trace t1\) took 800 ms, over 500 ms/);
  const status = traces({ select: { service: 'log' }, expect: { status: 'ok' } }).check(b.run);
  assert.match(status.summary, /ended in error: E_FENCED/);
  const none = traces({ select: { service: 'nobody' }, expect: { count: { min: 1 } } }).check(b.run);
  assert.match(none.summary, /0 spans picked, expected at least 1/);
});

test('the trace checks are in the checker registry', () => {
  for (const name of ['spansEnd', 'noGhostCompletions', 'traces']) assert.ok(checkerFactory(name), name);
  const c = checkerFactory('traces')!({ select: { service: 'client' }, expect: { count: { min: 1 } } });
  assert.equal(c.name, 'traces');
});
