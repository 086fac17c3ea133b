// The open-span ledger: OpenTelemetry exports a span only when it ends, so a process that is
// killed (or hangs) takes the work it had in flight with it. This SpanProcessor makes the
// *start* of every span that is still open at a tick visible at once: every `intervalMs` (50) it
// posts the spans started since the last tick and not yet ended (ids, name, kind, attributes,
// start) to the run's receiver, and later the end of each span it posted (end time, status).
// Spans that start and end within one tick are never posted: plain OTLP carries them, and the
// ledger costs next to nothing on short spans. It is extra — ended spans still go out as plain
// OTLP, so any backend works; only the run's receiver reads the ledger.
//
//   span start ─▶ pending ──tick (open still)──▶ {starts} ─┐
//   span end   ─▶ pending? drop (OTLP has it) : {ends} ───┴▶ one line of POST /v1/ledger
//
// The posts are one streamed request (NDJSON, a batch per line, renewed every 30 s), not a
// request per tick: a tick costs a write, not an HTTP exchange on both sides. The stream is
// open from the start (a first, empty batch names the service), and the receiver can answer
// on it: a line {"flush": k} asks the process to export every span it holds (`flushAll`, the
// provider's processors), and the ledger answers with a batch carrying `flushed: k` once the
// export is done, so the run collects its spans as soon as each service has answered instead
// of waiting out the batch delay.
//
//   receiver ──{"flush":k}──▶ flushAll() (queue exported, exports answered) ──{…,"flushed":k}──▶ receiver
//
// Bounded: at most `maxPending` spans wait for a tick and `maxPosted` posted spans are
// remembered, and at most 1 MiB waits to be written; over that, spans are counted as dropped.
// Posting never throws or blocks a span.
import http from 'node:http';
import type { Context } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/** The body of POST /v1/ledger (JSON). */
export interface LedgerBatch {
  service: string;
  starts: LedgerStart[];
  ends: LedgerEnd[];
  /** The answer to the receiver's flush request k: every span ended before it was exported. */
  flushed?: number;
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
  /** Exports every span the process holds (its processors' forceFlush); without it flush requests go unanswered. */
  flushAll?: () => Promise<void>;
  onError?: (err: unknown) => void;
}

export const SPAN_LEDGER_PATH = '/v1/ledger';
/** The content type of the streamed ledger: one LedgerBatch (JSON) per line. */
export const LEDGER_STREAM_TYPE = 'application/x-ndjson';
/** A stream is ended and a new one opened this often (no request lives for ever). */
const STREAM_RENEW_MS = 30_000;
const MAX_UNWRITTEN_BYTES = 1024 * 1024;
/** Bound on one answer to a flush request (an export that hangs must not hold it for ever). */
const FLUSH_ANSWER_BOUND_MS = 2000;

/**
 * The tick. A process killed less than one tick after a span started takes that span with it
 * (measured on leader-kill: the calls that reached the killed leader in its last ~40 ms), so
 * shorter is more complete; every tick with open spans is one line on the service's stream.
 */
export const DEFAULT_LEDGER_INTERVAL_MS = 50;

export class LedgerSpanProcessor implements SpanProcessor {
  private readonly pending = new Map<string, Span>();
  private readonly posted = new Set<string>();
  private ends: LedgerEnd[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  private stream: { req: http.ClientRequest; openedAt: number; answered: Promise<void> } | undefined;
  private closed = false;
  private helloAt = -Infinity;
  /** Spans the ledger could not keep (bounds) or post (errors): for the bench and tests. */
  dropped = 0;

  constructor(private readonly o: SpanLedgerOptions) {
    this.timer = setInterval(() => void this.flush(), o.intervalMs ?? DEFAULT_LEDGER_INTERVAL_MS).unref();
    this.hello();
  }

  /** Opens the stream with an empty batch when none is open: the receiver can reach the service. */
  private hello(): void {
    if (this.closed || this.o.flushAll === undefined || this.stream !== undefined) return;
    // At most one a second: a receiver that is gone is not dialled every tick.
    const now = Date.now();
    if (now - this.helloAt < 1000) return;
    this.helloAt = now;
    void this.write(this.line([], []));
  }

  /** Answers the receiver's flush request k once everything this process holds is exported. */
  private async answerFlush(k: number): Promise<void> {
    const flushAll = this.o.flushAll;
    if (flushAll === undefined || this.closed) return;
    // Answered only when the flush succeeded in time: else the receiver's wait runs out.
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), FLUSH_ANSWER_BOUND_MS).unref();
    });
    const flushed = flushAll().then(
      () => true,
      (err: unknown) => {
        this.o.onError?.(err);
        return false;
      },
    );
    const inTime = await Promise.race([flushed, bound]);
    clearTimeout(timer);
    if (!inTime || this.closed) return;
    await this.flush();
    if (this.closed) return;
    await this.write(this.line([], [], k));
  }

  /** One batch as a line of the stream (`flushed`: the answer to flush request k). */
  private line(starts: LedgerStart[], ends: LedgerEnd[], flushed?: number): string {
    const batch: LedgerBatch = {
      service: this.o.service,
      starts,
      ends,
      ...(flushed !== undefined ? { flushed } : {}),
    };
    return JSON.stringify(batch) + '\n';
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

  /** Writes what is open and what ended since the last tick as one line of the stream. */
  flush(): Promise<void> {
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
    if (starts.length === 0 && ends.length === 0) {
      this.hello();
      return Promise.resolve();
    }
    return this.write(this.line(starts, ends), starts.length);
  }

  /** One line on the stream; `starts` spans count as dropped when it cannot be written. */
  private write(line: string, starts = 0): Promise<void> {
    const req = this.openStream();
    if (req.writableLength > MAX_UNWRITTEN_BYTES) {
      this.dropped += starts;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) =>
      req.write(line, (err) => {
        if (err) {
          this.dropped += starts;
          this.o.onError?.(err);
        }
        resolve();
      }),
    );
  }

  forceFlush(): Promise<void> {
    return this.flush();
  }

  /** Posts the spans still open (they never ended: the run's receiver says so), then stops. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    await this.flush();
    this.closed = true;
    await this.endStream();
    this.agent.destroy();
  }

  /** The current stream, renewed when it is old or broken. */
  private openStream(): http.ClientRequest {
    const now = Date.now();
    if (
      this.stream !== undefined &&
      !this.stream.req.destroyed &&
      now - this.stream.openedAt < STREAM_RENEW_MS
    )
      return this.stream.req;
    void this.endStream();
    const req = http.request(this.o.url, {
      method: 'POST',
      agent: this.agent,
      headers: { 'content-type': LEDGER_STREAM_TYPE },
    });
    // An open stream must not keep a process alive that has nothing else to do.
    req.on('socket', (socket) => socket.unref());
    const answered = new Promise<void>((resolve) => {
      req.on('response', (res) => {
        if ((res.statusCode ?? 0) >= 300) this.o.onError?.(new Error(`ledger HTTP ${res.statusCode}`));
        // The receiver's requests, a JSON object per line: {"flush": k}.
        let unread = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          unread += chunk;
          for (let i = unread.indexOf('\n'); i >= 0; i = unread.indexOf('\n')) {
            const line = unread.slice(0, i);
            unread = unread.slice(i + 1);
            const k = flushRequestOf(line);
            if (k !== undefined) void this.answerFlush(k);
          }
          if (unread.length > 4096) unread = '';
        });
        res.on('end', () => {
          // An answer ends this stream, whatever it said: free its socket for the next one.
          req.destroy();
          resolve();
        });
        res.on('error', () => resolve());
      });
      req.on('error', (err) => {
        this.o.onError?.(err);
        resolve();
      });
      req.on('close', () => resolve());
    });
    const stream = { req, openedAt: now, answered };
    void answered.then(() => {
      if (this.stream === stream) this.stream = undefined;
    });
    this.stream = stream;
    return req;
  }

  /** Ends the current stream and waits (at most 2 s) for the receiver to have read it all. */
  private async endStream(): Promise<void> {
    const s = this.stream;
    this.stream = undefined;
    if (s === undefined) return;
    s.req.end();
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 2000).unref());
    await Promise.race([s.answered, timeout]);
    s.req.destroy();
  }
}

/** The k of a receiver's line {"flush": k}, or undefined for any other line. */
function flushRequestOf(line: string): number | undefined {
  try {
    const v = JSON.parse(line) as unknown;
    if (typeof v === 'object' && v !== null) {
      const k = (v as { flush?: unknown }).flush;
      if (typeof k === 'number' && Number.isInteger(k)) return k;
    }
  } catch {
    // not a flush request
  }
  return undefined;
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
