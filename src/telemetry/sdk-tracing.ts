// A service process's telemetry through OpenTelemetry's NodeSDK, so the standard OTEL_*
// variables work as users expect: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env
// resource detector), OTEL_TRACES_SAMPLER(_ARG), OTEL_PROPAGATORS, OTEL_BSP_*, and the
// exporter's endpoint, headers and protocol (http/protobuf, http/json or grpc). It registers
// the process's global tracer provider, so it is for a process that hosts one service
// (`limbo serve`); tests that host several services in one process keep createTracing's own
// providers, and every service passes its context explicitly either way.
//
//   limbo serve <role> ─▶ NodeSDK(resource from env + node name, sampler from env,
//                                 [BatchSpanProcessor(OTLP exporter from env), ledger?]) ─▶ global tracer
import { trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as OTLPJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as OTLPGrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import type { Logger } from './logger.js';
import {
  boundedShutdown,
  exportsDone,
  ledgerFor,
  logTelemetryErrors,
  noTracing,
  tracesWanted,
  type Tracing,
} from './tracing.js';

let started = false;

/**
 * Starts the NodeSDK for this process's one service (the node name is its service name unless
 * OTEL_SERVICE_NAME says otherwise). The SDK and its exporters read process.env, so `env`
 * should be it. A second call in one process gets `fallback`'s explicit provider instead,
 * since the SDK's providers are global.
 */
export function startSdkTracing(
  serviceName: string,
  logger: Logger,
  env: NodeJS.ProcessEnv,
  fallback: (serviceName: string, logger: Logger, env: NodeJS.ProcessEnv) => Tracing,
): Tracing {
  if (!tracesWanted(env)) return noTracing;
  if (started) return fallback(serviceName, logger, env);
  started = true;
  logTelemetryErrors(logger);
  const name =
    env.OTEL_SERVICE_NAME !== undefined && env.OTEL_SERVICE_NAME !== '' ? env.OTEL_SERVICE_NAME : serviceName;
  // OTEL_BSP_* tune it; without them the same batching as createTracing's.
  const exporter = exporterFromEnv(env);
  const batch = new BatchSpanProcessor(exporter, {
    scheduledDelayMillis: Number(env.OTEL_BSP_SCHEDULE_DELAY ?? 500),
    maxQueueSize: Number(env.OTEL_BSP_MAX_QUEUE_SIZE ?? 20_000),
    maxExportBatchSize: Number(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE ?? 512),
  });
  const ledger = ledgerFor(name, logger, env, exportsDone(batch, exporter));
  const processors: SpanProcessor[] = [batch, ...(ledger !== undefined ? [ledger] : [])];
  const sdk = new NodeSDK({
    // OTEL_SERVICE_NAME wins through the env detector; the option only fills in when it is unset.
    ...(name === serviceName ? { serviceName } : {}),
    spanProcessors: processors,
    // limbo does not log or meter through OpenTelemetry: no log exporter, no instrumentations.
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  return {
    tracer: trace.getTracer('limbo'),
    enabled: true,
    ledgerDropped: () => ledger?.dropped ?? 0,
    shutdown: () => boundedShutdown(sdk.shutdown(), 3000, logger),
    forceFlush: () => Promise.all(processors.map((p) => p.forceFlush())).then(() => undefined),
  };
}

/** The OTLP exporter the standard variables ask for; it reads endpoint, headers and timeout itself. */
function exporterFromEnv(env: NodeJS.ProcessEnv): SpanExporter {
  const protocol =
    (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim() ||
    'http/protobuf';
  if (protocol === 'grpc') return new OTLPGrpcExporter();
  if (protocol === 'http/json') return new OTLPJsonExporter();
  return new OTLPProtoExporter();
}
