// The log server's spans, so the log hop is seen from both sides: one SERVER span per Append
// (child of the processor's `log append` span through the `traceparent` gRPC metadata, with
// the lsn range it got), per GetTail, per Read stream (open while a processor tails; the
// open-span ledger shows it if the log dies), and per fencing step of the controller
// (compare-and-swap of a partition's leader, leadership transfer: the epoch each one set).
//
//   processor append span ─traceparent md─▶ `log append` (partition, records, first/last lsn)
//   processor tail        ──────────────▶ `log read` (partition, from lsn, entries sent)
//   CAS / transfer        ──────────────▶ `log fence` (partition, node, epoch, outcome)
import { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import type { grpc } from '../../transport/grpc.js';
import { spanAttributes as A, type SpanName } from '../../protocol/names.js';
import { contextFromTraceparent } from '../../telemetry/tracing.js';

/** The caller's trace context from gRPC metadata ('' when it sent none). */
export function traceparentFrom(metadata: grpc.Metadata | undefined): string {
  const v = metadata?.get('traceparent')[0];
  return typeof v === 'string' ? v : '';
}

export function startLogSpan(
  tracer: Tracer,
  name: SpanName,
  node: string,
  attributes: Record<string, string | number | boolean>,
  traceparent = '',
): Span {
  return tracer.startSpan(
    name,
    { kind: SpanKind.SERVER, attributes: { [A.node]: node, ...attributes } },
    contextFromTraceparent(traceparent),
  );
}

/** Ends `span`: with `attributes` when `err` is undefined, else with `err` as its status. */
export function endSpan(
  span: Span,
  err: Error | undefined,
  attributes: Record<string, string | number | boolean>,
): void {
  if (err === undefined) span.setAttributes(attributes);
  else span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  span.end();
}

/** Ends `span` when `work` settles: attributes from its value, or its error as the status. */
export async function traced<T>(
  span: Span,
  work: () => Promise<T> | T,
  attributesOf?: (value: T) => Record<string, string | number | boolean>,
): Promise<T> {
  let value: T;
  try {
    value = await work();
  } catch (err) {
    endSpan(span, err instanceof Error ? err : new Error(String(err)), {});
    throw err;
  }
  endSpan(span, undefined, attributesOf?.(value) ?? {});
  return value;
}
