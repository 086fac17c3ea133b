// One client span per op: the root of the op's trace (service `client`, kind CLIENT), so
// every trace has its root and the client's view (what it sent, what it got back, when) sits
// beside the servers'. The span's traceparent is what the op sends; with no tracer (or a
// no-op one) the op still gets a fresh random trace id, as before.
//
//   op ─▶ startClientSpan ─▶ traceparent header ─▶ ingress … ─▶ end(completion): outcome, status
//   op aborted at the end of the run ─▶ span left open (the open-span ledger shows it)
//   op its client gave up on ─▶ span ended, outcome info, error code aborted
import { randomBytes } from 'node:crypto';
import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { spanAttributes as A, spanNames } from '../protocol/names.js';
import type { OpKind } from '../run-data/run-data.js';
import { traceparentOf } from '../telemetry/tracing.js';
import type { Completion } from './history.js';

export interface ClientSpan {
  readonly traceId: string;
  readonly traceparent: string;
  /** Names the op's history id once it is known. */
  setOpId(opId: number): void;
  /** Ends the span with the op's outcome; an op the run's stop aborted keeps its span open on purpose. */
  end(completion: Completion): void;
}

export function startClientSpan(
  tracer: Tracer | undefined,
  kind: OpKind,
  process: number,
  invocationId: string | undefined,
): ClientSpan {
  const span = tracer?.startSpan(spanNames.clientOp(kind), {
    kind: SpanKind.CLIENT,
    attributes: {
      [A.opKind]: kind,
      [A.clientProcess]: process,
      ...(invocationId !== undefined ? { [A.invocationId]: invocationId } : {}),
    },
  });
  const traceparent = span === undefined ? '' : traceparentOf(span);
  if (span === undefined || traceparent === '') {
    const traceId = randomBytes(16).toString('hex');
    return {
      traceId,
      traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      setOpId: () => {},
      end: () => span?.end(),
    };
  }
  return {
    traceId: span.spanContext().traceId,
    traceparent,
    setOpId: (opId) => span.setAttribute(A.opId, opId),
    end(c) {
      if (c.keepOpen === true) return;
      // As the history does: the id the answer names wins over the one known before.
      if (c.invocationId !== undefined && c.invocationId !== invocationId)
        span.setAttribute(A.invocationId, c.invocationId);
      span.setAttribute(A.opOutcome, c.type);
      if (c.error !== undefined) span.setAttribute(A.opErrorCode, c.error.code);
      if (c.response?.status !== undefined) span.setAttribute(A.httpStatus, c.response.status);
      if (c.type !== 'ok')
        span.setStatus({ code: SpanStatusCode.ERROR, message: c.error?.message ?? c.type });
      span.end();
    },
  };
}
