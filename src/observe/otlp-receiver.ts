// An OTLP/HTTP trace receiver for a run: what services export to when the runner sets
// OTEL_EXPORTER_OTLP_ENDPOINT. Accepts POST /v1/traces as JSON or protobuf (optionally
// gzip), normalises every span into a SpanRecord and hands batches to `onSpans`. It also
// takes the open-span ledger (span-ledger.ts) on POST /v1/ledger, so the spans a killed or
// hung process never ended are still known: `unexportedSpans()`. A malformed request gets
// 400 and changes nothing.
//
//   exporter ──POST /v1/traces──▶ decode (json | protobuf) ─▶ SpanRecord[] ─▶ onSpans (e.g. spans.jsonl)
//   ledger   ──POST /v1/ledger──▶ starts / ends ─▶ unexportedSpans(): started, never exported
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import {
  LEDGER_STREAM_TYPE,
  SPAN_LEDGER_PATH,
  type LedgerBatch,
  type LedgerEnd,
  type LedgerStart,
} from '../telemetry/span-ledger.js';

import { spanStatus, type SpanRecord } from '../run-data/spans.js';
import { createInterner, noIntern, type Intern } from '../util/intern.js';

export type { SpanRecord };

/**
 * A span known from the ledger only: it started, and no OTLP export ever carried it. `endMs`
 * is null when it never ended (the process was killed, hung, or the run ended first); a number
 * when the ledger saw it end but its export was lost (e.g. queued when the process died).
 */
export interface LedgerSpanRecord extends Omit<SpanRecord, 'endMs'> {
  endMs: number | null;
}

export interface StartedOtlpReceiver extends AsyncDisposable {
  /** Base URL to use as OTEL_EXPORTER_OTLP_ENDPOINT (the exporters append /v1/traces). */
  readonly url: string;
  /** Spans received so far (bounded by maxSpans; later ones are counted in `dropped`). */
  readonly spans: readonly SpanRecord[];
  readonly dropped: number;
  /** Requests refused as malformed (400). */
  readonly rejected: number;
  /** Spans the ledger saw start, and how many of those it saw end. */
  readonly ledger: { starts: number; ends: number };
  /** Spans the ledger saw start that no OTLP export carried (yet), in start order. */
  unexportedSpans(): LedgerSpanRecord[];
  /**
   * In-process delivery for the runner's own tracers (in-process-tracing.ts): ended spans as if
   * exported over OTLP, and a source of the spans open right now (asked by unexportedSpans).
   */
  ingest(spans: SpanRecord[]): void;
  /** The run's interner: in-process spans keep their repeated strings once, as decoded ones do. */
  readonly intern: Intern;
  addOpenSpans(service: string, open: () => LedgerStart[]): void;
  /**
   * Asks every process that sent spans to export all it holds now, over its ledger stream,
   * and waits (at most `timeoutMs`) for each one's answer. True when every one answered: every
   * span they ended before the call is here. False at once when one of them has no ledger
   * stream to ask (it sends plain OTLP only, or is not running), else at the bound.
   */
  flushLedgers(timeoutMs: number): Promise<boolean>;
  stop(): Promise<void>;
}

export interface OtlpReceiverOptions {
  host?: string;
  port?: number;
  maxSpans?: number;
  maxBodyBytes?: number;
  onSpans?: (spans: SpanRecord[]) => void;
  /** Bound on the spans the ledger remembers (default 1,000,000). */
  maxLedgerSpans?: number;
}

const protoPath = fileURLToPath(new URL('../../../src/observe/otlp-trace.proto', import.meta.url));
let requestType: protobuf.Type | undefined;
function exportRequestType(): protobuf.Type {
  requestType ??= protobuf.loadSync(protoPath).lookupType('limbo.otlp.ExportTraceServiceRequest');
  return requestType;
}

export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<StartedOtlpReceiver> {
  const receiver = new OtlpReceiver(options);
  await receiver.listen();
  return receiver;
}

/** An in-process source of the spans open right now (addOpenSpans). */
interface LedgerSource {
  service: string;
  open: () => LedgerStart[];
}

/**
 * The receiver's state and its steps: `listen`, then per request `route` to `postBody` (one
 * OTLP or ledger body) or a `LedgerStreamRequest` (the ledger as a stream); `ingest` keeps
 * spans, `applyLedger` the ledger, `flushLedgers` asks the streams for everything.
 */
class OtlpReceiver implements StartedOtlpReceiver {
  readonly spans: SpanRecord[] = [];
  /** The run's repeated strings (names, services, attribute values, trace ids) kept once. */
  readonly intern = createInterner();
  readonly #options: OtlpReceiverOptions;
  readonly #maxSpans: number;
  readonly #maxBodyBytes: number;
  readonly #maxLedger: number;
  readonly #server: http.Server;
  #url = '';
  #dropped = 0;
  #rejected = 0;
  /** Ids of every exported span (only to tell which ledger spans were never exported). */
  readonly #exported = new Set<string>();
  readonly #ledger = new Map<string, { service: string; start: LedgerStart; end?: LedgerEnd }>();
  #ledgerStarts = 0;
  #ledgerEnds = 0;
  readonly #openSources: LedgerSource[] = [];
  /** Who sends spans over OTLP. */
  readonly #otlpServices = new Set<string>();
  /**
   * Each ledger service's open streams (to ask for a flush on; a service stays a key once it
   * had one, so a stopped one is still a source).
   */
  readonly #streams = new Map<string, Set<http.ServerResponse>>();
  readonly #flushedUpTo = new Map<string, number>();
  readonly #onFlushed = new Set<() => void>();
  #flushSeq = 0;

  constructor(options: OtlpReceiverOptions) {
    this.#options = options;
    this.#maxSpans = options.maxSpans ?? 1_000_000;
    this.#maxBodyBytes = options.maxBodyBytes ?? 64 * 1024 * 1024;
    this.#maxLedger = options.maxLedgerSpans ?? 1_000_000;
    this.#server = http.createServer((req, res) => this.#route(req, res));
  }

  async listen(): Promise<void> {
    const host = this.#options.host ?? '127.0.0.1';
    await new Promise<void>((resolve) => this.#server.listen(this.#options.port ?? 0, host, resolve));
    this.#url = `http://${host}:${(this.#server.address() as AddressInfo).port}`;
  }

  get url(): string {
    return this.#url;
  }

  get dropped(): number {
    return this.#dropped;
  }

  get rejected(): number {
    return this.#rejected;
  }

  get ledger(): { starts: number; ends: number } {
    return { starts: this.#ledgerStarts, ends: this.#ledgerEnds };
  }

  ingest(batch: SpanRecord[]): void {
    const room = Math.max(0, this.#maxSpans - this.spans.length);
    this.spans.push(...batch.slice(0, room));
    this.#dropped += Math.max(0, batch.length - room);
    for (const s of batch) {
      if (this.#exported.size < 2 * this.#maxLedger) this.#exported.add(s.spanId);
      // An exported span is known in full: its ledger entry is no longer needed.
      this.#ledger.delete(s.spanId);
    }
    this.#options.onSpans?.(batch);
  }

  addOpenSpans(service: string, open: () => LedgerStart[]): void {
    this.#openSources.push({ service, open });
  }

  #route(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'POST' || (path !== '/v1/traces' && path !== SPAN_LEDGER_PATH)) {
      res.writeHead(404).end();
      return;
    }
    // A client that goes away mid-request is its own problem, never the run's.
    req.on('error', () => {});
    if (path === SPAN_LEDGER_PATH && String(req.headers['content-type'] ?? '').includes(LEDGER_STREAM_TYPE))
      new LedgerStreamRequest(this, req, res, this.#maxBodyBytes).read();
    else this.#postBody(req, res, path);
  }

  /** One OTLP export or ledger batch in one body, bounded. */
  #postBody(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= this.#maxBodyBytes) chunks.push(c);
    });
    req.on('end', () => {
      if (size > this.#maxBodyBytes) {
        res.writeHead(413).end();
        return;
      }
      const type = String(req.headers['content-type'] ?? '');
      let body = Buffer.concat(chunks);
      try {
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const json = type.includes('json') || path === SPAN_LEDGER_PATH;
        if (path === SPAN_LEDGER_PATH) this.applyLedger(body);
        else this.#onTraces(body, json);
        if (json) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } catch (err) {
        this.countRejected();
        res
          .writeHead(400, { 'content-type': 'text/plain' })
          .end(`bad ${path === SPAN_LEDGER_PATH ? 'ledger' : 'OTLP'} payload: ${(err as Error).message}`);
      }
    });
  }

  #onTraces(body: Buffer, json: boolean): void {
    const batch = json ? decodeJson(body, this.intern) : decodeProtobuf(body, this.intern);
    for (const s of batch) this.#otlpServices.add(s.service);
    this.ingest(batch);
  }

  /** Applies one ledger batch: starts not yet exported, their ends, a flush answer. */
  applyLedger(body: Buffer | string): LedgerBatch {
    const batch = decodeLedger(body);
    for (const start of batch.starts) {
      if (this.#ledger.size >= this.#maxLedger) break;
      if (this.#ledger.has(start.spanId)) continue;
      this.#ledgerStarts++;
      if (!this.#exported.has(start.spanId))
        this.#ledger.set(start.spanId, { service: batch.service, start });
    }
    for (const end of batch.ends) {
      const entry = this.#ledger.get(end.spanId);
      if (entry !== undefined && entry.end === undefined) {
        entry.end = end;
        this.#ledgerEnds++;
      }
    }
    if (batch.flushed !== undefined && batch.flushed > (this.#flushedUpTo.get(batch.service) ?? 0)) {
      this.#flushedUpTo.set(batch.service, batch.flushed);
      for (const f of this.#onFlushed) f();
    }
    return batch;
  }

  countRejected(): void {
    this.#rejected++;
  }

  /** A ledger stream of `service` is open on `res` (until `forgetStream`). */
  addStream(service: string, res: http.ServerResponse): void {
    let set = this.#streams.get(service);
    if (set === undefined) this.#streams.set(service, (set = new Set()));
    set.add(res);
  }

  forgetStream(service: string, res: http.ServerResponse): void {
    this.#streams.get(service)?.delete(res);
  }

  flushLedgers(timeoutMs: number): Promise<boolean> {
    const sources = new Set([...this.#otlpServices, ...this.#streams.keys()]);
    if (sources.size === 0) return Promise.resolve(false);
    for (const service of sources)
      if ((this.#streams.get(service)?.size ?? 0) === 0) return Promise.resolve(false);
    const k = ++this.#flushSeq;
    const request = JSON.stringify({ flush: k }) + '\n';
    for (const service of sources)
      for (const res of this.#streams.get(service) ?? []) {
        if (!res.headersSent) res.writeHead(200, { 'content-type': LEDGER_STREAM_TYPE });
        res.write(request);
      }
    return new Promise<boolean>((resolve) => {
      const done = (all: boolean): void => {
        clearTimeout(timer);
        this.#onFlushed.delete(check);
        resolve(all);
      };
      const check = (): void => {
        if ([...sources].every((s) => (this.#flushedUpTo.get(s) ?? 0) >= k)) done(true);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#onFlushed.add(check);
    });
  }

  unexportedSpans(): LedgerSpanRecord[] {
    const out: LedgerSpanRecord[] = [];
    for (const src of this.#openSources)
      for (const start of src.open())
        if (!this.#exported.has(start.spanId) && !this.#ledger.has(start.spanId))
          out.push({ ...start, service: src.service, endMs: null, status: { code: 0, message: '' } });
    for (const { service, start, end } of this.#ledger.values()) {
      if (this.#exported.has(start.spanId)) continue;
      out.push({
        ...start,
        service,
        endMs: end?.endMs ?? null,
        status: end?.status ?? { code: 0, message: '' },
      });
    }
    return out.sort((a, b) => a.startMs - b.startMs);
  }

  stop(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#server.closeAllConnections();
      this.#server.close(() => resolve());
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

/**
 * The ledger as a stream (span-ledger.ts): one long request per service, a JSON batch per
 * line, each applied as it arrives; a bad line (or one over the body bound) ends it with 400.
 */
class LedgerStreamRequest {
  #pending = '';
  #failed = false;
  #service: string | undefined;

  constructor(
    private readonly receiver: OtlpReceiver,
    private readonly req: http.IncomingMessage,
    private readonly res: http.ServerResponse,
    private readonly maxLineBytes: number,
  ) {}

  read(): void {
    this.req.on('close', () => this.#forget());
    this.req.setEncoding('utf8');
    this.req.on('data', (chunk: string) => this.#onData(chunk));
    this.req.on('end', () => this.#onEnd());
  }

  #onData(chunk: string): void {
    if (this.#failed) return;
    this.#pending += chunk;
    for (let i = this.#pending.indexOf('\n'); i >= 0 && !this.#failed; i = this.#pending.indexOf('\n')) {
      this.#apply(this.#pending.slice(0, i));
      this.#pending = this.#pending.slice(i + 1);
    }
    if (!this.#failed && this.#pending.length > this.maxLineBytes) this.#fail('a line over the body bound');
  }

  #onEnd(): void {
    if (!this.#failed) this.#apply(this.#pending);
    this.#forget();
    if (this.#failed) return;
    if (this.res.headersSent) this.res.end();
    else this.res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }

  #apply(line: string): void {
    if (line.trim() === '') return;
    try {
      const batch = this.receiver.applyLedger(line);
      if (this.#service === undefined) {
        this.#service = batch.service;
        this.receiver.addStream(this.#service, this.res);
      }
    } catch (err) {
      this.#fail((err as Error).message);
    }
  }

  #forget(): void {
    if (this.#service !== undefined) this.receiver.forgetStream(this.#service, this.res);
  }

  #fail(message: string): void {
    this.#failed = true;
    this.receiver.countRejected();
    this.#forget();
    // Once a flush request went out the status is sent: the message says why and the
    // connection closes, so the client sees its stream end.
    if (this.res.headersSent) {
      this.res.end(`bad ledger payload: ${message}`);
      this.req.socket.destroySoon();
    } else
      this.res
        .writeHead(400, { 'content-type': 'text/plain', connection: 'close' })
        .end(`bad ledger payload: ${message}`);
  }
}

// ------------------------------------------------------------------ decoding

type AnyValue = Record<string, unknown>;

function anyValue(v: AnyValue | undefined): string | number | boolean {
  if (!v) return '';
  // Own properties only: a decoded protobuf message has every field's default on its prototype.
  if (Object.hasOwn(v, 'stringValue')) return String(v.stringValue);
  if (Object.hasOwn(v, 'boolValue')) return Boolean(v.boolValue);
  if (Object.hasOwn(v, 'intValue')) return longToNumber(v.intValue);
  if (Object.hasOwn(v, 'doubleValue')) return Number(v.doubleValue);
  if (Object.hasOwn(v, 'arrayValue')) {
    const values = ((v.arrayValue as { values?: AnyValue[] }).values ?? []).map(anyValue);
    return JSON.stringify(values);
  }
  // OTLP/JSON gives bytes as base64 (only trace and span ids are hex); protobuf as bytes.
  if (Object.hasOwn(v, 'bytesValue'))
    return typeof v.bytesValue === 'string'
      ? Buffer.from(v.bytesValue, 'base64').toString('hex')
      : hex(v.bytesValue);
  return '';
}

function attributes(list: unknown, intern: Intern): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of (list as { key: string; value?: AnyValue }[] | undefined) ?? []) {
    const v = anyValue(kv.value);
    out[kv.key] = typeof v === 'string' ? intern(v) : v;
  }
  return out;
}

function hex(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
  return '';
}

/** An int64 as JSON gives it (a string or number) or protobufjs decodes it (a Long: low, high). */
function longToNumber(v: unknown): number {
  if (v && typeof v === 'object' && 'low' in v && 'high' in v) {
    const l = v as { low: number; high: number };
    return Number(BigInt.asIntN(64, (BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0)));
  }
  return Number(v);
}

/** Epoch nanoseconds (a decimal string, a number or a Long) as epoch ms, to the microsecond. */
function nanosToMs(v: unknown): number {
  if (typeof v === 'string') return Number(BigInt(v) / 1000n) / 1000;
  if (typeof v === 'number') return v / 1e6;
  if (v && typeof v === 'object' && 'low' in v && 'high' in v) {
    const l = v as { low: number; high: number };
    return Number(((BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0)) / 1000n) / 1000;
  }
  return 0;
}

/** Walks the decoded request (same shape for JSON and for protobufjs objects in camelCase). */
function normalise(request: Record<string, unknown>, intern: Intern): SpanRecord[] {
  const out: SpanRecord[] = [];
  for (const rs of (request.resourceSpans as Record<string, unknown>[] | undefined) ?? []) {
    const resource = attributes((rs.resource as { attributes?: unknown } | undefined)?.attributes, intern);
    const service = intern(String(resource['service.name'] ?? 'unknown'));
    for (const ss of (rs.scopeSpans as Record<string, unknown>[] | undefined) ?? []) {
      for (const s of (ss.spans as Record<string, unknown>[] | undefined) ?? []) {
        const status = (s.status as { code?: number | string; message?: string } | undefined) ?? {};
        // A trace's id is shared by all its spans; a span id is unique (only a child's
        // parentSpanId repeats one, and remembering every id costs what it would save).
        out.push({
          traceId: intern(hex(s.traceId)),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: typeof s.name === 'string' ? intern(s.name) : '',
          service,
          kind: Number(s.kind ?? 0),
          startMs: nanosToMs(s.startTimeUnixNano),
          endMs: nanosToMs(s.endTimeUnixNano),
          attributes: attributes(s.attributes, intern),
          status: spanStatus(Number(status.code ?? 0), String(status.message ?? '')),
        });
      }
    }
  }
  return out;
}

/** The spans of an OTLP/JSON request; `intern` gives repeated strings one copy (e.g. a run's). */
export function decodeJson(body: Buffer, intern: Intern = noIntern): SpanRecord[] {
  return normalise(JSON.parse(body.toString('utf8')) as Record<string, unknown>, intern);
}

/** The spans of an OTLP/protobuf request; `intern` as for decodeJson. */
export function decodeProtobuf(body: Buffer, intern: Intern = noIntern): SpanRecord[] {
  const type = exportRequestType();
  // The decoded message is walked as it is (no toObject copy): normalise reads own fields only.
  return normalise(type.decode(body) as unknown as Record<string, unknown>, intern);
}

/** A ledger batch, checked field by field (the receiver answers 400 on anything else). */
export function decodeLedger(body: Buffer | string): LedgerBatch {
  const raw = JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as unknown;
  if (typeof raw !== 'object' || raw === null) throw new Error('not an object');
  const b = raw as Record<string, unknown>;
  if (typeof b.service !== 'string') throw new Error('service must be a string');
  if (!Array.isArray(b.starts) || !Array.isArray(b.ends)) throw new Error('starts and ends must be arrays');
  const str = (v: unknown, what: string): string => {
    if (typeof v !== 'string') throw new Error(`${what} must be a string`);
    return v;
  };
  const num = (v: unknown, what: string): number => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`${what} must be a number`);
    return v;
  };
  const obj = (v: unknown, what: string): Record<string, unknown> => {
    if (typeof v !== 'object' || v === null) throw new Error(`${what} must be an object`);
    return v as Record<string, unknown>;
  };
  const starts = b.starts.map((v, i): LedgerStart => {
    const s = obj(v, `starts[${i}]`);
    const attributes: LedgerStart['attributes'] = {};
    for (const [k, a] of Object.entries(obj(s.attributes ?? {}, `starts[${i}].attributes`)))
      if (typeof a === 'string' || typeof a === 'number' || typeof a === 'boolean') attributes[k] = a;
    return {
      traceId: str(s.traceId, `starts[${i}].traceId`),
      spanId: str(s.spanId, `starts[${i}].spanId`),
      parentSpanId: typeof s.parentSpanId === 'string' ? s.parentSpanId : '',
      name: str(s.name, `starts[${i}].name`),
      kind: typeof s.kind === 'number' ? s.kind : 0,
      startMs: num(s.startMs, `starts[${i}].startMs`),
      attributes,
    };
  });
  const ends = b.ends.map((v, i): LedgerEnd => {
    const e = obj(v, `ends[${i}]`);
    const status = obj(e.status ?? {}, `ends[${i}].status`);
    return {
      traceId: str(e.traceId, `ends[${i}].traceId`),
      spanId: str(e.spanId, `ends[${i}].spanId`),
      endMs: num(e.endMs, `ends[${i}].endMs`),
      status: {
        code: typeof status.code === 'number' ? status.code : 0,
        message: typeof status.message === 'string' ? status.message : '',
      },
    };
  });
  return {
    service: b.service,
    starts,
    ends,
    ...(typeof b.flushed === 'number' && Number.isInteger(b.flushed) ? { flushed: b.flushed } : {}),
  };
}
