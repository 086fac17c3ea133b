// A one-service process for the NodeSDK tests: traces through startSdkTracing with whatever
// OTEL_* the test set, records one span, shuts down (flushing), and exits.
import { startSdkTracing } from '../../src/telemetry/sdk-tracing.js';
import { createTracing } from '../../src/telemetry/tracing.js';
import { silentLogger } from '../../src/telemetry/logger.js';

const tracing = startSdkTracing('node-name', silentLogger, process.env, createTracing);
const span = tracing.tracer.startSpan('sdk span', { attributes: { 'limbo.invocation.id': 'inv_sdk' } });
span.end();
await tracing.shutdown();
process.stdout.write(
  `enabled ${String(tracing.enabled)} sampled ${String(span.isRecording() || span.spanContext().traceFlags === 1)}\n`,
);
