// The run's OTLP receiver accepts what the real OTel exporters send, JSON and protobuf.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultTextMapSetter, ROOT_CONTEXT, trace, TraceFlags, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
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

test('traceparentOf writes what the W3C propagator injects: sampled, unsampled, invalid', () => {
  const propagator = new W3CTraceContextPropagator();
  const injected = (span: Span): string => {
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
    return carrier.traceparent ?? '';
  };
  const spans = [
    trace.wrapSpanContext({
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      traceFlags: TraceFlags.SAMPLED,
    }),
    trace.wrapSpanContext({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 0,
    }),
    trace.wrapSpanContext({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 1 }),
  ];
  for (const span of spans) assert.equal(traceparentOf(span), injected(span));
  assert.equal(traceparentOf(spans[0]!), `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`);
  assert.equal(traceparentOf(spans[1]!), '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00');
  assert.equal(traceparentOf(spans[2]!), '');
});
