// The workload exports one client span per op to an OTLP receiver: the root of the op's trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import { createHistoryRecorder } from '../../src/workload/history.js';
import { startWorkload } from '../../src/workload/workload.js';
import { startOtlpReceiver } from '../../src/observe/otlp-receiver.js';
import { createTracing } from '../../src/telemetry/tracing.js';
import { silentLogger } from '../../src/telemetry/logger.js';
import { pairOps } from '../../src/run-data/run-data.js';
import { startToyIngress } from '../testbed/toy-ingress.js';

test('every op has one client span: its trace id, kind, op id, invocation id and outcome', async (t) => {
  const ingress = await startToyIngress();
  t.after(() => ingress.stop());
  await using receiver = await startOtlpReceiver();
  const tracing = createTracing('client', silentLogger, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  });
  const history = createHistoryRecorder(createClock());
  const wl = startWorkload({
    baseUrls: [ingress.url],
    random: createRandom(7),
    history,
    concurrency: 2,
    opTimeoutMs: 5000,
    tracer: tracing.tracer,
  });
  for (let i = 0; i < 500 && history.completed() < 30; i++) await new Promise((r) => setTimeout(r, 10));
  await wl.stop(5000);
  await tracing.shutdown();
  const pairs = pairOps(history.ops);
  assert.ok(pairs.length >= 30);
  const byTrace = new Map(receiver.spans.map((s) => [s.traceId, s]));
  assert.equal(receiver.spans.length, pairs.length, 'one client span per op');
  for (const p of pairs) {
    const span = byTrace.get(p.invoke.traceId ?? '');
    assert.ok(span, `a client span for op ${p.invoke.opId}`);
    assert.equal(span.service, 'client');
    assert.equal(span.kind, 3, 'SpanKind.CLIENT');
    assert.equal(span.parentSpanId, '', 'the root of its trace');
    assert.equal(span.name, `client ${p.invoke.kind}`);
    assert.equal(span.attributes['limbo.op.kind'], p.invoke.kind);
    assert.equal(span.attributes['limbo.op.id'], p.invoke.opId);
    assert.equal(span.attributes['limbo.op.outcome'], p.end?.type);
    if (p.end?.invocationId !== undefined)
      assert.equal(span.attributes['limbo.invocation.id'], p.end.invocationId);
    assert.ok(span.startMs <= span.endMs);
  }
});

test('an op left open at the end of the run leaves its client span open (not exported as ended)', async (t) => {
  const ingress = await startToyIngress({ hang: true });
  t.after(() => ingress.stop());
  await using receiver = await startOtlpReceiver();
  const tracing = createTracing('client', silentLogger, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  const history = createHistoryRecorder(createClock());
  const wl = startWorkload({
    baseUrls: [ingress.url],
    random: createRandom(8),
    history,
    concurrency: 1,
    mix: { call: 1 },
    opTimeoutMs: 60_000,
    tracer: tracing.tracer,
  });
  for (let i = 0; i < 200 && history.inFlight() === 0; i++) await new Promise((r) => setTimeout(r, 10));
  await wl.stop(0);
  await tracing.shutdown();
  assert.equal(history.inFlight(), 1);
  assert.equal(receiver.spans.length, 0);
});
