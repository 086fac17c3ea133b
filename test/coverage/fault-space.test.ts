// The fault space of a run, on hand-made run data: each fault that met ops is a cell per
// request phase it met (the deepest span open in the op's trace at the inject, or the op kind
// awaiting its answer without spans), named by what it struck; a fault that met nothing makes
// no cell but its subject shows as not met; and what `limbo coverage` prints of several runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { faultSpaceOf, formatFaultSpace, subjectOf } from '../../src/coverage/fault-space.js';
import type { RunSpan } from '../../src/run-data/run-data.js';
import { RunBuilder } from '../helpers/run-data-builder.js';

function span(
  run: RunBuilder,
  traceId: string,
  spanId: string,
  parent: string,
  service: string,
  name: string,
  fromMs: number,
  toMs: number | null,
): RunSpan {
  const t0 = Date.parse(run.run.phases.startedAtWall);
  return {
    traceId,
    spanId,
    parentSpanId: parent,
    name,
    service,
    kind: 0,
    startMs: t0 + fromMs,
    endMs: toMs === null ? null : t0 + toMs,
    attributes: {},
    status: { code: 0, message: '' },
  };
}

function sampleRun(): RunBuilder {
  const b = new RunBuilder();
  b.run.phases = { startedAtWall: new Date(0).toISOString(), chaosStartMs: 0, healedAtMs: 10_000 };
  // A leader kill met a call inside a processor submit, and a call without spans.
  b.fault({ fault: 'kill', target: 'processor-1', leader: true, injectedAtMs: 1000, healedAtMs: 2000 });
  const traced = b.op(900, 1500, 'ok');
  b.run.history.filter((o) => o.opId === traced).forEach((o) => (o.traceId = 't1'));
  b.op(800, 1600, 'ok', 'send');
  b.op(1200, 1300, 'ok'); // started while the kill was in: the kill already met ops in flight
  // Latency on a peer link met no op in flight, but ops started while it was in.
  b.fault({ fault: 'latency', target: 'ingress-1->processor-2', injectedAtMs: 5000, healedAtMs: 6000 });
  b.op(5500, 5700, 'ok');
  // A pause of the log met nothing at all.
  b.fault({ fault: 'pause', target: 'log', injectedAtMs: 8000, healedAtMs: 9000 });
  b.run.spans = [
    span(b, 't1', 'c', '', 'client', 'client call', 900, 1500),
    span(b, 't1', 'i', 'c', 'ingress-1', 'ingress call', 901, 1500),
    span(b, 't1', 'a', 'i', 'ingress-1', 'ingress submit attempt', 902, 1500),
    span(b, 't1', 'p', 'a', 'processor-1', 'processor submit', 950, null),
    span(b, 't1', 'h', 'p', 'processor-1', 'invoke Echo/echo', 960, 990), // ended before the kill
  ];
  return b;
}

test('each fault that met ops is a cell per request phase, named by what it struck', () => {
  const space = faultSpaceOf(sampleRun().run, { 'ingress-1->processor-2': 'peer' });
  assert.deepEqual(
    space.cells.map((c) => [c.fault, c.subject, c.phase, c.windows, c.ops]),
    [
      ['kill', 'processor (leader)', 'processor submit', 1, 1],
      ['kill', 'processor (leader)', 'send awaiting its answer', 1, 1],
      ['latency', 'peer link ingress->processor', 'ops started while it was in', 1, 1],
    ],
  );
  assert.deepEqual(space.met, [
    { fault: 'kill', subject: 'processor (leader)', windows: 1 },
    { fault: 'latency', subject: 'peer link ingress->processor', windows: 1 },
  ]);
  assert.deepEqual(space.unmet, [{ fault: 'pause', subject: 'log', windows: 1 }]);
});

test('subjects: links by kind and roles, processes by role and leadership', () => {
  const w = { affects: [], injectedAtMs: 0 };
  assert.equal(subjectOf({ ...w, fault: 'latency', target: 'client->etcd-2' }), 'client link client->etcd');
  assert.equal(
    subjectOf({ ...w, fault: 'latency', target: 'processor-1->log' }, { 'processor-1->log': 'storage' }),
    'storage link processor->log',
  );
  assert.equal(subjectOf({ ...w, fault: 'kill', target: 'processor-3' }), 'processor');
  assert.equal(subjectOf({ ...w, fault: 'kill', target: 'nats-2', leader: true }), 'nats (leader)');
  assert.equal(subjectOf({ ...w, fault: 'follower-lag', target: 'processor-1,processor-2' }), 'processor');
});

test('limbo coverage prints what each subject met, the fault kinds never put on it, and the phases', () => {
  const one = faultSpaceOf(sampleRun().run);
  const other = sampleRun();
  other.run.faults = [
    { fault: 'pause', target: 'processor-2', affects: [], injectedAtMs: 1000, healedAtMs: 1400 },
  ];
  const text = formatFaultSpace([one, faultSpaceOf(other.run)]);
  assert.match(text, /^fault space over 2 run\(s\) on reference: 5 cell\(s\) met/m);
  assert.match(text, /^ {2}processor \(leader\)\s+kill 1$/m);
  assert.match(text, /^ {2}processor\s+pause 1$/m);
  assert.match(text, /^ {2}log\s+nothing \(its faults met no op\)$/m);
  // Process faults put on this subject's role, never on this subject: situations no run created
  // (a kill of a follower, a pause of the leader). Kill and pause met processors only: the log,
  // another role, is not said to miss them.
  assert.match(text, /^ {2}processor \(leader\)\s+pause$/m);
  assert.match(text, /^ {2}processor\s+kill$/m);
  assert.doesNotMatch(text.slice(text.indexOf('not met:')), /^ {2}log /m);
  // The only link fault kind met the only link subject: nothing missing there.
  const notMet = text.slice(text.indexOf('not met:'), text.indexOf('request phases met'));
  assert.doesNotMatch(notMet, /peer link/);
  assert.match(
    text,
    /^ {2}kill × processor \(leader\): processor submit \(1\), send awaiting its answer \(1\)$/m,
  );
});
