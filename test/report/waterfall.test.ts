import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderWaterfall, spansOfInvocation } from '../../src/report/waterfall.js';
import type { SpanRecord } from '../../src/observe/otlp-receiver.js';

const span = (o: Partial<SpanRecord> & Pick<SpanRecord, 'spanId' | 'name'>): SpanRecord => ({
  traceId: 't1',
  parentSpanId: '',
  service: 'ingress-1',
  kind: 0,
  startMs: 1000,
  endMs: 1100,
  attributes: {},
  status: { code: 0, message: '' },
  ...o,
});

const spans: SpanRecord[] = [
  span({
    spanId: 'a',
    name: 'ingress call',
    startMs: 1000,
    endMs: 4000,
    attributes: { 'limbo.invocation.id': 'inv_1' },
  }),
  span({
    spanId: 'b',
    parentSpanId: 'a',
    name: 'ingress submit attempt',
    startMs: 1010,
    endMs: 3000,
    status: { code: 2, message: 'connection_lost' },
    attributes: { 'limbo.attempt': 1, 'limbo.resend.reason': '' },
  }),
  span({
    spanId: 'c',
    parentSpanId: 'a',
    name: 'ingress submit attempt',
    startMs: 3100,
    endMs: 3990,
    attributes: { 'limbo.attempt': 2, 'limbo.resend.reason': 'connection_lost' },
  }),
  span({
    spanId: 'd',
    parentSpanId: 'c',
    name: 'invoke Sleep/sleep',
    service: 'processor-2',
    startMs: 3200,
    endMs: 3900,
    attributes: { 'limbo.leader.epoch': 3 },
  }),
  span({ traceId: 't2', spanId: 'x', name: 'other', attributes: { 'limbo.invocation.id': 'inv_2' } }),
];

test('spans of an invocation are the whole traces that mention it', () => {
  assert.deepEqual(
    spansOfInvocation(spans, 'inv_1').map((s) => s.spanId),
    ['a', 'b', 'c', 'd'],
  );
  assert.deepEqual(spansOfInvocation(spans, 'nope'), []);
});

test('the waterfall nests by parent, orders by start, shows attempts, reasons, errors and faults', () => {
  const w = renderWaterfall('inv_1', spans, [
    { fault: 'kill', target: 'processor-1', startMs: 2000, endMs: 5000 },
    { fault: 'latency', target: 'ingress->log', startMs: 9000, endMs: 9500 },
  ]);
  assert.deepEqual(w.traceIds, ['t1']);
  const text = w.lines.join('\n');
  assert.match(w.lines[0]!, /inv_1 .* 4 spans over 3000 ms/);
  const order = [
    'ingress call',
    '  ingress submit attempt',
    '  ingress submit attempt',
    '    invoke Sleep/sleep',
  ];
  const rows = w.lines.slice(2, 6);
  order.forEach((name, i) => assert.ok(rows[i]!.includes(name), `${rows[i]} has ${name}`));
  assert.match(rows[1]!, /attempt 1, ERROR connection_lost/);
  assert.match(rows[2]!, /attempt 2, resend: connection_lost/);
  assert.match(rows[3]!, /processor-2 .* epoch 3/);
  assert.match(text, /kill on processor-1/);
  assert.doesNotMatch(text, /ingress->log/);
});
