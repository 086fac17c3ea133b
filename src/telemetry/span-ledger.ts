// The open-span ledger: OpenTelemetry exports a span only when it ends, so a process that is
// killed (or hangs) takes the work it had in flight with it. This SpanProcessor makes the
// *start* of every span that is still open at a tick visible at once: every `intervalMs` (50) it
// posts the spans started since the last tick and not yet ended (ids, name, kind, attributes,
// start) to the run's receiver, and later the end of each span it posted (end time, status).
// Spans that start and end within one tick are never posted: plain OTLP carries them, and the
// ledger costs next to nothing on short spans. It is extra — ended spans still go out as plain
// OTLP, so any backend works; only the run's receiver reads the ledger.
//
//   span start ─▶ pending ──tick (open still)──▶ POST /v1/ledger {starts}
//   span end   ─▶ pending? drop (OTLP has it) : POST /v1/ledger {ends}
//
// Bounded: at most `maxPending` spans wait for a tick and `maxPosted` posted spans are
// remembered; over that, spans are counted as dropped. Posting never throws or blocks a span.
import http from 'node:http';
import type { Context } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/** The body of POST /v1/ledger (JSON). */
export interface LedgerBatch {
  service: string;
  starts: LedgerStart[];
  ends: LedgerEnd[];
}

export interface LedgerStart {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startMs: number;
  attributes: Record<string, string | number | boolean>;
}

export interface LedgerEnd {
  traceId: string;
  spanId: string;
  endMs: number;
  status: { code: number; message: string };
}

export interface SpanLedgerOptions {
  /** Full URL of the receiver's ledger endpoint, e.g. http://127.0.0.1:4318/v1/ledger. */
  url: string;
  service: string;
  intervalMs?: number;
  maxPending?: number;
  maxPosted?: number;
  onError?: (err: unknown) => void;
}

export const SPAN_LEDGER_PATH = '/v1/ledger';

/**
 * The tick. A process killed less than one tick after a span started takes that span with it
 * (measured on leader-kill: the calls that reached the killed leader in its last ~40 ms), so
 * shorter is more complete; every tick with open spans is one small POST per service.
 */
export const DEFAULT_LEDGER_INTERVAL_MS = 50;

export class LedgerSpanProcessor implements SpanProcessor {
  private readonly pending = new Map<string, Span>();
  private readonly posted = new Set<string>();
  private ends: LedgerEnd[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private inFlight: Promise<void> | undefined;
  private closed = false;
  /** Spans the ledger could not keep (bounds) or post (errors): for the bench and tests. */
  dropped = 0;

  constructor(private readonly o: SpanLedgerOptions) {
    this.timer = setInterval(() => void this.flush(), o.intervalMs ?? DEFAULT_LEDGER_INTERVAL_MS).unref();
  }

  onStart(span: Span, _parentContext: Context): void {
    if (this.closed) return;
    if (this.pending.size >= (this.o.maxPending ?? 20_000)) {
      this.dropped++;
      return;
    }
    this.pending.set(span.spanContext().spanId, span);
  }

  onEnd(span: ReadableSpan): void {
    const { spanId, traceId } = span.spanContext();
    if (this.pending.delete(spanId)) return;
    if (!this.posted.delete(spanId)) return;
    this.ends.push({
      traceId,
      spanId,
      endMs: hrTimeToMilliseconds(span.endTime),
      status: { code: span.status.code, message: span.status.message ?? '' },
    });
  }

  /** Posts what is open and what ended since the last post; one post at a time (bounded). */
  flush(): Promise<void> {
    if (this.inFlight !== undefined) return this.inFlight;
    const starts: LedgerStart[] = [];
    const maxPosted = this.o.maxPosted ?? 50_000;
    for (const [spanId, span] of this.pending) {
      if (this.posted.size >= maxPosted) {
        this.dropped++;
        continue;
      }
      starts.push(startOf(span));
      this.posted.add(spanId);
    }
    this.pending.clear();
    const ends = this.ends;
    this.ends = [];
    if (starts.length === 0 && ends.length === 0) return Promise.resolve();
    const body = JSON.stringify({ service: this.o.service, starts, ends } satisfies LedgerBatch);
    this.inFlight = this.post(body)
      .catch((err: unknown) => {
        this.dropped += starts.length;
        this.o.onError?.(err);
      })
      .finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  forceFlush(): Promise<void> {
    return this.flush();
  }

  /** Posts the spans still open (they never ended: the run's receiver says so), then stops. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    await this.inFlight;
    await this.flush();
    this.closed = true;
    this.agent.destroy();
  }

  private post(body: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const req = http.request(
        this.o.url,
        {
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          timeout: 2000,
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            (res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`ledger HTTP ${res.statusCode}`)),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('ledger post timed out')));
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** What the ledger records of a span at its start. */
export function startOf(span: Span): LedgerStart {
  const attributes: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(span.attributes)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') attributes[k] = v;
    else if (v !== undefined) attributes[k] = JSON.stringify(v);
  }
  return {
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? '',
    name: span.name,
    // OTLP's numbering (INTERNAL = 1), as the receiver records exported spans.
    kind: span.kind + 1,
    startMs: hrTimeToMilliseconds(span.startTime),
    attributes,
  };
}
