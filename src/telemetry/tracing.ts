// One OpenTelemetry tracer per service instance, injected like the metrics registry.
//
//   OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT set ─▶ BasicTracerProvider ─▶ BatchSpanProcessor ─▶ OTLP/HTTP
//                                                (protocol from OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL:
//                                                 http/protobuf (default) or http/json)
//   not set, or OTEL_TRACES_EXPORTER=none     ─▶ the API's no-op tracer: next to no cost
//
// With LIMBO_SPAN_LEDGER_ENDPOINT set (the runner sets it to its receiver), an open-span ledger
// rides beside the exporter, so spans a killed or hung process never ended are still known.
//
// Context is passed explicitly (parent contexts, W3C traceparent strings in HTTP headers,
// gRPC requests and log records), so nothing depends on a global context manager, and
// two instances can share a process. Export failures are logged, never thrown.
import {
  isSpanContextValid,
  ROOT_CONTEXT,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { setGlobalErrorHandler, W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as OTLPJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { Logger } from './logger.js';
import { LedgerSpanProcessor } from './span-ledger.js';

/** Where services post the open-span ledger (span-ledger.ts); unset: no ledger, plain OTLP only. */
export const SPAN_LEDGER_ENV = 'LIMBO_SPAN_LEDGER_ENDPOINT';
/** The ledger's tick in ms (default 50; at least 5). */
export const SPAN_LEDGER_INTERVAL_ENV = 'LIMBO_SPAN_LEDGER_INTERVAL_MS';

export interface Tracing {
  readonly tracer: Tracer;
  readonly enabled: boolean;
  /** Spans the open-span ledger could not keep or post (0 without a ledger). */
  ledgerDropped(): number;
  /** Flushes what is buffered and stops exporting (bounded). */
  shutdown(): Promise<void>;
  /** Exports what is buffered now and goes on (absent: nothing to flush). */
  forceFlush?(): Promise<void>;
}

const propagator = new W3CTraceContextPropagator();
const getter = {
  get: (carrier: Record<string, string>, key: string) => carrier[key],
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
};

let errorHandlerSet = false;

/** The no-op tracing: what a service gets when nothing asks for its spans. */
export const noTracing: Tracing = {
  tracer: trace.getTracer('limbo-noop'),
  enabled: false,
  ledgerDropped: () => 0,
  shutdown: () => Promise.resolve(),
};

/** Whether OTEL_* in `env` asks for traces at all: an endpoint, and not switched off. */
export function tracesWanted(env: NodeJS.ProcessEnv): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return !(
    endpoint === undefined ||
    endpoint === '' ||
    env.OTEL_TRACES_EXPORTER === 'none' ||
    env.OTEL_SDK_DISABLED === 'true'
  );
}

/** Telemetry errors are logged, never thrown (set once per process). */
export function logTelemetryErrors(logger: Logger): void {
  if (errorHandlerSet) return;
  errorHandlerSet = true;
  setGlobalErrorHandler((err) => logger.warn('telemetry error (ignored)', { error: err }));
}

/** The open-span ledger beside the exporter, when LIMBO_SPAN_LEDGER_ENDPOINT names one. */
export function ledgerFor(
  serviceName: string,
  logger: Logger,
  env: NodeJS.ProcessEnv,
  flushAll?: () => Promise<void>,
): LedgerSpanProcessor | undefined {
  const url = env[SPAN_LEDGER_ENV];
  if (url === undefined || url === '') return undefined;
  const intervalMs = Number(env[SPAN_LEDGER_INTERVAL_ENV] ?? '');
  return new LedgerSpanProcessor({
    url,
    service: serviceName,
    ...(Number.isFinite(intervalMs) && intervalMs >= 5 ? { intervalMs } : {}),
    ...(flushAll !== undefined ? { flushAll } : {}),
    onError: (err) => logger.debug('span ledger post failed (ignored)', { error: err }),
  });
}

/**
 * A flush that is done once the batch processor's queue went out and every export in flight
 * was answered (the processor's own forceFlush does not wait for an export its timer started).
 */
export function exportsDone(batch: SpanProcessor, exporter: SpanExporter): () => Promise<void> {
  return () => batch.forceFlush().then(() => exporter.forceFlush?.());
}

/** Waits for `work` at most `ms` (shutdowns must not hang a stopping service). */
export async function boundedShutdown(work: Promise<unknown>, ms: number, logger: Logger): Promise<void> {
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
  await Promise.race([
    work.catch((err: unknown) => logger.warn('tracing shutdown failed', { error: err })),
    timeout,
  ]);
}

/**
 * A tracer provider of its own (not registered globally), so two instances can share a
 * process (tests host several services in one); the exporter is built from the injected env.
 */
export function createTracing(
  serviceName: string,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Tracing {
  if (!tracesWanted(env)) return noTracing;
  logTelemetryErrors(logger);
  const endpoint = (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT)!;
  const protocol =
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  // The exporters would read process.env themselves; pass the URL so an injected env wins.
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined && env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== ''
      ? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
      : `${endpoint.replace(/\/+$/, '')}/v1/traces`;
  const exporter: SpanExporter =
    protocol === 'http/json' ? new OTLPJsonExporter({ url }) : new OTLPProtoExporter({ url });
  const batch = new BatchSpanProcessor(exporter, {
    scheduledDelayMillis: 500,
    maxQueueSize: 20_000,
    maxExportBatchSize: 512,
  });
  const ledger = ledgerFor(serviceName, logger, env, exportsDone(batch, exporter));
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [batch, ...(ledger !== undefined ? [ledger] : [])],
  });
  return {
    tracer: provider.getTracer('limbo'),
    enabled: true,
    ledgerDropped: () => ledger?.dropped ?? 0,
    shutdown: () => boundedShutdown(provider.shutdown(), 3000, logger),
    forceFlush: () => provider.forceFlush(),
  };
}

/** The W3C traceparent of a span ('' when the span is not recording / not sampled). */
export function traceparentOf(span: Span): string {
  // What W3CTraceContextPropagator.inject writes (version 00, no tracestate), without building a
  // context and a carrier per hop: it runs for every call on every service.
  const c = span.spanContext();
  if (!isSpanContextValid(c)) return '';
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A parent context from a traceparent string (ROOT_CONTEXT when absent or malformed). */
export function contextFromTraceparent(traceparent: string | undefined): Context {
  if (traceparent === undefined || traceparent === '') return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { traceparent }, getter);
}

export function contextOf(span: Span): Context {
  return trace.setSpan(ROOT_CONTEXT, span);
}
