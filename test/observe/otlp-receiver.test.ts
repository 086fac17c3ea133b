// The run's OTLP receiver accepts what the real OTel exporters send, JSON and protobuf.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startOtlpReceiver } from '../../src/observe/otlp-receiver.js';
import {
  contextOf,
  createTracing,
  traceparentOf,
  contextFromTraceparent,
} from '../../src/telemetry/tracing.js';
import { silentLogger } from '../../src/telemetry/logger.js';

for (const protocol of ['http/json', 'http/protobuf'] as const) {
  test(`receiver decodes spans exported over ${protocol}`, async () => {
    await using receiver = await startOtlpReceiver();
    const tracing = createTracing('ingress-1', silentLogger, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    });
    assert.equal(tracing.enabled, true);
    const root = tracing.tracer.startSpan('ingress call', {
      attributes: { 'limbo.invocation.id': 'inv_1', 'limbo.partition': 3 },
    });
    const child = tracing.tracer.startSpan(
      'attempt',
      { attributes: { 'limbo.attempt': 2, ok: true } },
      contextOf(root),
    );
    // A span continued from a traceparent string (as a processor does from a log record).
    const remote = tracing.tracer.startSpan('invoke', {}, contextFromTraceparent(traceparentOf(child)));
    remote.end();
    child.end();
    root.end();
    await tracing.shutdown();
    const spans = receiver.spans;
    assert.equal(spans.length, 3);
    const byName = new Map(spans.map((s) => [s.name, s]));
    const r = byName.get('ingress call')!;
    const c = byName.get('attempt')!;
    const i = byName.get('invoke')!;
    assert.equal(r.service, 'ingress-1');
    assert.match(r.traceId, /^[0-9a-f]{32}$/);
    assert.match(r.spanId, /^[0-9a-f]{16}$/);
    assert.equal(c.traceId, r.traceId);
    assert.equal(i.traceId, r.traceId);
    assert.equal(c.parentSpanId, r.spanId);
    assert.equal(i.parentSpanId, c.spanId);
    assert.equal(r.parentSpanId, '');
    assert.deepEqual(r.attributes, { 'limbo.invocation.id': 'inv_1', 'limbo.partition': 3 });
    assert.deepEqual(c.attributes, { 'limbo.attempt': 2, ok: true });
    assert.ok(r.startMs > Date.now() - 60_000 && r.endMs >= r.startMs, `${r.startMs} ${r.endMs}`);
  });
}

test('without an endpoint tracing is a no-op', async () => {
  const tracing = createTracing('x', silentLogger, {});
  assert.equal(tracing.enabled, false);
  const span = tracing.tracer.startSpan('nothing');
  assert.equal(traceparentOf(span), '');
  span.end();
  await tracing.shutdown();
});
