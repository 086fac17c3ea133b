// The log server's spans: append joins the caller's trace (traceparent gRPC metadata) with the
// lsn it got; a read stream is one span, open while it tails (known through the ledger) and
// ended with the entries it sent.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogClient, grpc } from '../../src/transport/grpc.js';
import { startLogServer, type StartedLogServer } from '../../src/services/log/log-server.js';
import { startOtlpReceiver, type StartedOtlpReceiver } from '../../src/observe/otlp-receiver.js';
import { SPAN_LEDGER_ENV } from '../../src/telemetry/tracing.js';
import { SPAN_LEDGER_PATH } from '../../src/telemetry/span-ledger.js';

/** A log server in this process (2 partitions, in a temp dir) exporting its spans and ledger to `receiver`. */
function tracedLog(t: TestContext, receiver: StartedOtlpReceiver): Promise<StartedLogServer> {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-logspans-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return startLogServer({
    dataDir: dir,
    partitions: 2,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      [SPAN_LEDGER_ENV]: `${receiver.url}${SPAN_LEDGER_PATH}`,
    },
  });
}

test('log append, read and get_tail spans', async (t) => {
  await using receiver = await startOtlpReceiver();
  const log = await tracedLog(t, receiver);
  let stopped = false;
  t.after(async () => {
    if (!stopped) await log.stop();
  });
  const client = createLogClient(log.addresses.grpc!);
  t.after(() => client.close());
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const md = new grpc.Metadata();
  md.set('traceparent', `00-${traceId}-00f067aa0ba902b7-01`);
  const res = await client.append(
    { partition: 1, records: [Buffer.from('a'), Buffer.from('b')] },
    { metadata: md, timeoutMs: 5000 },
  );
  await client.getTail({ partition: 1 }, { timeoutMs: 5000 });
  const stream = client.read({ partition: 1, fromLsn: 1 });
  let got = 0;
  await new Promise<void>((resolve) =>
    stream.on('data', (b: { entries: unknown[] }) => {
      got += b.entries.length;
      if (got >= 2) resolve();
    }),
  );
  stream.on('error', () => {});
  // The read stream is open: the ledger posts it within a tick.
  const openReadSpan = () => receiver.unexportedSpans().find((s) => s.name === 'log read');
  for (let i = 0; i < 100 && openReadSpan() === undefined; i++) await new Promise((r) => setTimeout(r, 20));
  const openRead = openReadSpan();
  assert.ok(openRead, 'the open read stream is in the ledger');
  assert.equal(openRead.endMs, null);
  assert.equal(openRead.attributes['limbo.partition'], 1);
  stream.cancel();
  await new Promise((r) => setTimeout(r, 50));
  await log.stop();
  stopped = true;

  const byName = new Map(receiver.spans.map((s) => [s.name, s]));
  const append = byName.get('log append');
  assert.ok(append, `spans: ${receiver.spans.map((s) => s.name).join(', ')}`);
  assert.equal(append.traceId, traceId, 'the append joined the caller trace');
  assert.equal(append.parentSpanId, '00f067aa0ba902b7');
  assert.equal(append.kind, 2, 'SpanKind.SERVER');
  assert.equal(append.service, 'log');
  assert.equal(append.attributes['limbo.partition'], 1);
  assert.equal(append.attributes['limbo.log.records'], 2);
  assert.equal(append.attributes['limbo.lsn'], res.lastLsn);
  const tail = byName.get('log get_tail');
  assert.equal(tail?.attributes['limbo.lsn'], res.lastLsn);
  const read = byName.get('log read');
  assert.ok(read, 'the read span ended once the stream went away');
  assert.equal(read.attributes['limbo.log.entries'], 2);
  assert.deepEqual(
    receiver.unexportedSpans().filter((s) => s.endMs === null),
    [],
    'nothing left open after a clean stop',
  );
});

test('appends that travel in one batch each get their own span in their own trace', async (t) => {
  await using receiver = await startOtlpReceiver();
  const log = await tracedLog(t, receiver);
  const client = createLogClient(log.addresses.grpc!);
  const traces = ['a', 'b', 'c'].map((c) => c.repeat(32));
  const before = client.appendStats.calls;
  const results = await Promise.all(
    traces.map((traceId, i) => {
      const md = new grpc.Metadata();
      md.set('traceparent', `00-${traceId}-${String(i + 1).padStart(16, '0')}-01`);
      return client.append(
        { partition: i % 2, records: [Buffer.from(`r${i}`)] },
        { metadata: md, timeoutMs: 5000 },
      );
    }),
  );
  assert.equal(client.appendStats.calls - before, 1, 'the three appends travelled in one call');
  client.close();
  await log.stop();
  const appends = receiver.spans.filter((s) => s.name === 'log append');
  assert.equal(appends.length, 3);
  traces.forEach((traceId, i) => {
    const span = appends.find((s) => s.traceId === traceId);
    assert.ok(span, `a log append span in trace ${traceId}`);
    assert.equal(span.parentSpanId, String(i + 1).padStart(16, '0'));
    assert.equal(span.attributes['limbo.partition'], i % 2);
    assert.equal(span.attributes['limbo.lsn'], results[i]!.lastLsn);
  });
});
