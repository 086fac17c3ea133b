// The workload exports one client span per op to an OTLP receiver: the root of the op's trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import { createHistoryRecorder } from '../../src/workload/history.js';
import { startWorkload } from '../../src/workload/workload.js';
import { inProcessTracing } from '../../src/observe/in-process-tracing.js';
import { startOtlpReceiver, type StartedOtlpReceiver } from '../../src/observe/otlp-receiver.js';
import { createTracing, type Tracing } from '../../src/telemetry/tracing.js';
import { silentLogger } from '../../src/telemetry/logger.js';
import { pairOps } from '../../src/run-data/run-data.js';
import { startToyIngress } from '../helpers/toy-ingress.js';

const ways: [string, (receiver: StartedOtlpReceiver) => Tracing][] = [
  [
    'exported over OTLP/JSON',
    (receiver) =>
      createTracing('client', silentLogger, {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      }),
  ],
  // What a run's span sink does when its receiver is in the runner's process.
  ['handed to the receiver in process', (receiver) => inProcessTracing('client', receiver)],
];

for (const [how, tracingFor] of ways)
  test(`every op has one client span (${how}): its trace id, kind, op id, invocation id and outcome`, async (t) => {
    const ingress = await startToyIngress();
    t.after(() => ingress.stop());
    await using receiver = await startOtlpReceiver();
    const tracing = tracingFor(receiver);
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

test('in process: a client span left open is known to the receiver as never ended', async (t) => {
  const ingress = await startToyIngress({ hang: true });
  t.after(() => ingress.stop());
  await using receiver = await startOtlpReceiver();
  const tracing = inProcessTracing('client', receiver);
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
  assert.equal(receiver.spans.length, 0, 'nothing exported as ended');
  const open = receiver.unexportedSpans();
  assert.equal(open.length, 1);
  assert.equal(open[0]!.service, 'client');
  assert.equal(open[0]!.name, 'client call');
  assert.equal(open[0]!.endMs, null);
  assert.equal(open[0]!.traceId, history.ops[0]!.traceId);
});
