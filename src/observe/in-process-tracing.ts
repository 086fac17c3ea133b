// The runner's own tracers (the workload's client spans, the fault windows) when the run's
// receiver lives in this process: spans go straight into the receiver, as the records an OTLP
// export would have become, instead of being encoded to protobuf, posted over HTTP to
// ourselves and decoded again; and the spans open right now (an op aborted at the end of the
// run leaves its client span open on purpose) are read off the tracer when the receiver asks,
// instead of being posted by a ledger tick. Same records, same run data, a fraction of the
// runner's CPU per op (see `npm run bench tracing`). With a user's OTLP endpoint the runner
// exports over OTLP like any service (tracing.ts).
//
//   tracer ─▶ span ends ─▶ BatchSpanProcessor ─▶ receiver.ingest(SpanRecord[])
//          └▶ open spans (Map) ◀── receiver.unexportedSpans() asks
import type { Context } from '@opentelemetry/api';
import { ExportResultCode, hrTimeToMilliseconds, type ExportResult } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { spanStatus, type SpanRecord } from '../run-data/spans.js';
import { noIntern, type Intern } from '../util/intern.js';
import { startOf } from '../telemetry/span-ledger.js';
import { boundedShutdown, type Tracing } from '../telemetry/tracing.js';
import { silentLogger } from '../telemetry/logger.js';
import type { StartedOtlpReceiver } from './otlp-receiver.js';

/** A span as the receiver records an exported one. */
export function spanRecordOf(span: ReadableSpan, service: string, intern: Intern = noIntern): SpanRecord {
  const attributes: SpanRecord['attributes'] = {};
  for (const [k, v] of Object.entries(span.attributes)) {
    if (typeof v === 'string') attributes[k] = intern(v);
    else if (typeof v === 'number' || typeof v === 'boolean') attributes[k] = v;
    else if (v !== undefined) attributes[k] = JSON.stringify(v);
  }
  const ctx = span.spanContext();
  return {
    traceId: intern(ctx.traceId),
    spanId: ctx.spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? '',
    name: intern(span.name),
    service,
    // OTLP numbers kinds from 1 (INTERNAL), the API from 0: as an exported span reads.
    kind: span.kind + 1,
    startMs: hrTimeToMilliseconds(span.startTime),
    endMs: hrTimeToMilliseconds(span.endTime),
    attributes,
    status: spanStatus(span.status.code, span.status.message ?? ''),
  };
}

class ReceiverExporter implements SpanExporter {
  constructor(
    private readonly receiver: StartedOtlpReceiver,
    private readonly service: string,
  ) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.receiver.ingest(spans.map((s) => spanRecordOf(s, this.service, this.receiver.intern)));
    done({ code: ExportResultCode.SUCCESS });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The spans started and not yet ended, for the receiver to ask about. */
class OpenSpans implements SpanProcessor {
  readonly open = new Map<string, Span>();
  onStart(span: Span, _parent: Context): void {
    this.open.set(span.spanContext().spanId, span);
  }
  onEnd(span: ReadableSpan): void {
    this.open.delete(span.spanContext().spanId);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** A tracer for `service` whose spans (ended, and open when asked) go into `receiver` directly. */
export function inProcessTracing(service: string, receiver: StartedOtlpReceiver): Tracing {
  const open = new OpenSpans();
  receiver.addOpenSpans(service, () => [...open.open.values()].map(startOf));
  const provider = new BasicTracerProvider({
    spanProcessors: [
      // Batched, as an exporter is: the op's own path only queues the ended span.
      new BatchSpanProcessor(new ReceiverExporter(receiver, service), {
        scheduledDelayMillis: 200,
        maxQueueSize: 100_000,
        maxExportBatchSize: 2048,
      }),
      open,
    ],
  });
  return {
    tracer: provider.getTracer('limbo'),
    enabled: true,
    ledgerDropped: () => 0,
    shutdown: () => boundedShutdown(provider.shutdown(), 3000, silentLogger),
    forceFlush: () => provider.forceFlush(),
  };
}
