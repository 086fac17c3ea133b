// Bad input to the run's receiver: every malformed request gets 400 (or 404 / 413), nothing
// is recorded, and the receiver keeps serving good requests afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { startOtlpReceiver } from '../../src/observe/otlp-receiver.js';

async function post(url: string, body: Buffer | string, headers: Record<string, string>): Promise<number> {
  const r = await fetch(url, { method: 'POST', body, headers });
  await r.arrayBuffer();
  return r.status;
}

test('malformed OTLP and ledger requests get 400 and never crash the receiver', async () => {
  await using receiver = await startOtlpReceiver({ maxBodyBytes: 64 * 1024 });
  const traces = `${receiver.url}/v1/traces`;
  const ledger = `${receiver.url}/v1/ledger`;
  const json = { 'content-type': 'application/json' };
  const proto = { 'content-type': 'application/x-protobuf' };
  const cases: [string, string, Buffer | string, Record<string, string>][] = [
    ['not JSON', traces, '{"resourceSpans": [', json],
    ['resourceSpans not a list', traces, '{"resourceSpans": 5}', json],
    ['null resource span', traces, '{"resourceSpans": [null]}', json],
    [
      'bad time',
      traces,
      JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ startTimeUnixNano: 'soon' }] }] }] }),
      json,
    ],
    ['random protobuf', traces, Buffer.from([0xff, 0xff, 0xff, 0x0f, 0x01, 0x02]), proto],
    ['bad gzip', traces, Buffer.from('not gzip'), { ...proto, 'content-encoding': 'gzip' }],
    ['ledger not JSON', ledger, 'nope', json],
    ['ledger without service', ledger, '{"starts": [], "ends": []}', json],
    [
      'ledger start without ids',
      ledger,
      '{"service": "x", "starts": [{"name": "a", "startMs": 1}], "ends": []}',
      json,
    ],
    [
      'ledger end with a string time',
      ledger,
      '{"service": "x", "starts": [], "ends": [{"traceId": "t", "spanId": "s", "endMs": "later"}]}',
      json,
    ],
  ];
  for (const [what, url, body, headers] of cases) assert.equal(await post(url, body, headers), 400, what);
  assert.equal(receiver.rejected, cases.length);
  assert.equal(await post(`${receiver.url}/v1/metrics`, '{}', json), 404);
  assert.equal(await post(traces, Buffer.alloc(100 * 1024), proto), 413);
  // A client that goes away mid-body is not the receiver's problem.
  const ac = new AbortController();
  const slow = fetch(traces, {
    method: 'POST',
    headers: proto,
    body: new ReadableStream({
      start(c) {
        c.enqueue(new Uint8Array(10));
        setTimeout(() => ac.abort(), 20);
      },
    }),
    signal: ac.signal,
    duplex: 'half',
  }).catch(() => undefined);
  await slow;
  // Still serving, nothing recorded from the bad ones.
  const good = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
        scopeSpans: [
          {
            spans: [
              {
                traceId: 'ab',
                spanId: 'cd',
                name: 'ok',
                startTimeUnixNano: '1000000',
                endTimeUnixNano: '2000000',
              },
            ],
          },
        ],
      },
    ],
  };
  assert.equal(
    await post(traces, gzipSync(JSON.stringify(good)), { ...json, 'content-encoding': 'gzip' }),
    200,
  );
  assert.deepEqual(
    receiver.spans.map((s) => [s.service, s.name, s.startMs, s.endMs]),
    [['svc', 'ok', 1, 2]],
  );
  assert.equal(receiver.ledger.starts, 0);
});

test('the streamed ledger: each line applied as it comes; a bad line ends the stream with 400, the lines before it stay', async () => {
  await using receiver = await startOtlpReceiver({ maxBodyBytes: 4096 });
  const ledger = `${receiver.url}/v1/ledger`;
  const ndjson = { 'content-type': 'application/x-ndjson' };
  const start = (spanId: string) => ({
    traceId: 'a'.repeat(32),
    spanId,
    parentSpanId: '',
    name: 'open',
    kind: 1,
    startMs: 1,
    attributes: { 'limbo.invocation.id': 'inv_1' },
  });
  const line = (spanId: string): string =>
    JSON.stringify({ service: 'svc', starts: [start(spanId)], ends: [] });
  // Two good lines, split across chunks mid-line, then the end: 200, both applied.
  const good = `${line('1111111111111111')}\n${line('2222222222222222')}\n`;
  const chunks = [good.slice(0, 50), good.slice(50, 170), good.slice(170)];
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const x of chunks) c.enqueue(new TextEncoder().encode(x));
      c.close();
    },
  });
  const ok = await fetch(ledger, { method: 'POST', body, headers: ndjson, duplex: 'half' });
  await ok.arrayBuffer();
  assert.equal(ok.status, 200);
  assert.equal(receiver.ledger.starts, 2);
  // A good line, a bad one, another good one: 400 naming it; only the first is kept.
  const mixed = `${line('3333333333333333')}\n{"service": 5}\n${line('4444444444444444')}\n`;
  assert.equal(await post(ledger, mixed, ndjson), 400);
  assert.equal(receiver.ledger.starts, 3);
  // A line longer than the body bound, never ended by a newline: 400.
  assert.equal(await post(ledger, 'x'.repeat(5000), ndjson), 400);
  assert.equal(receiver.rejected, 2);
  assert.deepEqual(
    receiver
      .unexportedSpans()
      .map((s) => s.spanId)
      .sort(),
    ['1111111111111111', '2222222222222222', '3333333333333333'],
  );
});
