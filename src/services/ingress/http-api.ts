// The ingress's HTTP/1.1 API: one request from parse to answer.
//
//   handle(req) ─▶ pending table + deadline + span ─▶ route() ─▶ Dispatcher | LegacyDispatcher
//        ▲                                                          │
//        └──── send(status, JSON) + finish(outcome): metrics, span ◀┘ (HttpError → error body)
//
// Every request is counted as pending from arrival until its answer (pending-table.ts). A
// client that closes its connection first aborts the request (499, never sent) wherever it is,
// counted by stage (limbo_ingress_client_gone_total); a request refused by a bound before any
// work is counted by limit (limbo_ingress_refused_total). An answer the client's connection
// does not take at once (a client that does not read it) is counted as a write that waited
// (limbo_ingress_response_write_waits_total) and held on a gauge until the client has taken it
// or gone (limbo_ingress_responses_waiting_for_client).
import type http from 'node:http';
import { lookupHandler, catalogue } from '../../protocol/catalogue.js';
import { isInvocationId, makeInvocationId } from '../../protocol/ids.js';
import { checkHandlerInput, checkIdempotencyKey, checkKey, limits } from '../../protocol/limits.js';
import type * as w from '../../protocol/wire.js';
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import {
  INVOCATION_ID_HEADER,
  TRACE_ID_HEADER,
  spanAttributes as A,
  spanNames,
} from '../../protocol/names.js';
import { contextFromTraceparent, traceparentOf, type Tracing } from '../../telemetry/tracing.js';
import type { Dispatcher, SubmitInput } from './dispatcher.js';
import type { LegacyDispatcher } from './legacy-dispatcher.js';
import type { ClientGoneStage, IngressMetrics, RefusalLimit, RequestKind } from './metrics.js';
import type { Router } from './router.js';
import type { BugName } from '../bugs.js';
import type { PendingTable } from './pending-table.js';
import { HttpError, badArgument } from './errors.js';
import { messageOf } from '../../util/errors.js';

export interface ApiOptions {
  /** 0 = no deadline. */
  requestTimeoutMs: number;
  maxPending: number;
  maxBodyBytes: number;
  bugs: ReadonlySet<BugName>;
}

export class IngressApi {
  closing = false;

  constructor(
    private readonly o: ApiOptions,
    private readonly router: Router,
    private readonly dispatcher: Dispatcher,
    private readonly legacy: LegacyDispatcher | undefined,
    private readonly metrics: IngressMetrics,
    private readonly pending: PendingTable,
    private readonly tracing: Tracing,
  ) {}

  handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    let url: URL;
    let segments: string[];
    try {
      url = new URL(req.url ?? '/', 'http://ingress');
      segments = url.pathname
        .split('/')
        .filter((s) => s !== '')
        .map((s) => decodeURIComponent(s));
    } catch {
      // A path that is not a URL or has a broken %-escape: the client's error, never a crash.
      this.metrics.requests.inc({ kind: 'call', outcome: 'bad_request' });
      send(res, 400, { error: 'malformed request path', field: 'path' });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/health') {
      send(res, 200, { ok: true, partitionTable: this.router.current !== undefined });
      return;
    }
    let kind: RequestKind;
    if (segments[0] === 'invocations') kind = segments[2] === 'attach' ? 'attach' : 'output';
    else kind = segments[segments.length - 1] === 'send' ? 'send' : 'call';
    const startedAt = performance.now();
    const id = this.pending.add(kind, startedAt);
    this.metrics.pending.inc({ kind });
    const abort = new AbortController();
    let deadline: NodeJS.Timeout | undefined;
    if (this.o.requestTimeoutMs > 0) {
      deadline = setTimeout(
        () => abort.abort(new HttpError(504, 'deadline', 'request deadline passed')),
        this.o.requestTimeoutMs,
      );
    }
    // How far the request has gone, for the count of clients that went away.
    let stage: ClientGoneStage = 'receiving';
    res.on('close', () => {
      if (res.writableFinished) return;
      if (!this.closing && !abort.signal.aborted) this.metrics.clientGone.inc({ kind, stage });
      abort.abort(new HttpError(499, 'aborted', 'client went away'));
    });
    let invocationId: string | undefined;
    const span = this.tracing.tracer.startSpan(
      spanNames.ingressRequest(kind),
      {
        kind: SpanKind.SERVER,
        attributes: { [A.httpMethod]: req.method ?? '', [A.urlPath]: url.pathname },
      },
      contextFromTraceparent(headerValue(req.headers.traceparent)),
    );
    if (this.tracing.enabled) res.setHeader(TRACE_ID_HEADER, span.spanContext().traceId);
    const finish = (outcome: string, status: number): void => {
      span.setAttribute(A.httpStatus, status);
      span.setAttribute(A.outcome, outcome);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
      span.end();
      clearTimeout(deadline);
      if (!this.pending.delete(id)) return;
      // Bug switch pending-gauge-leak: error answers stay on the pending gauge.
      if (!(status >= 400 && this.o.bugs.has('pending-gauge-leak'))) this.metrics.pending.dec({ kind });
      this.metrics.requests.inc({ kind, outcome });
      this.metrics.duration.observe({ kind, outcome }, (performance.now() - startedAt) / 1000);
    };
    const setInvocationId = (idv: string, partition?: number): void => {
      invocationId = idv;
      span.setAttribute(A.invocationId, idv);
      if (partition !== undefined) span.setAttribute(A.partition, partition);
    };
    const setStage = (s: ClientGoneStage): void => {
      stage = s;
    };
    this.route(req, segments, kind, abort.signal, setInvocationId, setStage, span)
      .then(({ status, body, outcome }) => {
        if (invocationId !== undefined) res.setHeader(INVOCATION_ID_HEADER, invocationId);
        // Bug switch pending-gauge-leak: the early path of a resent send that found its
        // invocation already accepted leaves the request table but not the pending gauge.
        if (
          this.o.bugs.has('pending-gauge-leak') &&
          (body as { status?: unknown }).status === 'PreviouslyAccepted'
        )
          this.pending.delete(id);
        send(res, status, body);
        setStage('answering');
        this.watchWrite(res, kind);
        finish(outcome, status);
      })
      .catch((err: unknown) => {
        const e =
          err instanceof HttpError
            ? err
            : abort.signal.reason instanceof HttpError
              ? abort.signal.reason
              : new HttpError(500, 'error', messageOf(err));
        if (e.status === 499) {
          finish('aborted', 499);
          return;
        }
        for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
        const idv = e.invocationId ?? invocationId;
        if (idv !== undefined) res.setHeader(INVOCATION_ID_HEADER, idv);
        send(res, e.status, {
          error: e.message,
          ...(e.field !== undefined ? { field: e.field } : {}),
          ...(idv !== undefined ? { invocationId: idv } : {}),
        });
        setStage('answering');
        this.watchWrite(res, kind);
        finish(e.outcome, e.status);
      });
  }

  /**
   * After the answer was handed to its response: if the connection's socket did not take every
   * byte (the kernel's buffers are full because the client does not read), the write waits for
   * the client. Counted once, and held on the gauge until the answer is flushed or the
   * connection closes. A response queued behind an earlier one on the same connection (HTTP
   * pipelining) is judged when it gets the socket and is flushed. Everything else about the
   * request (pending table, metrics, span) is already finished: the client's reading is its own.
   */
  private watchWrite(res: http.ServerResponse, kind: RequestKind): void {
    if (res.writableFinished || res.destroyed) return;
    const judge = (): void => {
      if (res.writableFinished || res.destroyed || res.writableLength === 0) return;
      this.metrics.responseWriteWaits.inc({ kind });
      this.metrics.responsesWaitingForClient.inc({ kind });
      let waiting = true;
      const done = (): void => {
        if (!waiting) return;
        waiting = false;
        this.metrics.responsesWaitingForClient.dec({ kind });
      };
      res.once('finish', done);
      res.once('close', done);
    };
    // A response without its socket yet is flushed right after the socket is assigned.
    if (res.socket !== null) judge();
    else res.once('socket', () => process.nextTick(judge));
  }

  private async route(
    req: http.IncomingMessage,
    segments: string[],
    kind: RequestKind,
    signal: AbortSignal,
    setInvocationId: (id: string, partition?: number) => void,
    setStage: (stage: ClientGoneStage) => void,
    span: Span,
  ): Promise<{ status: number; body: unknown; outcome: string }> {
    const refuse = (limit: RefusalLimit, message: string): HttpError => {
      this.metrics.refused.inc({ kind, limit });
      return new HttpError(503, 'overloaded', message, { 'retry-after': '1' });
    };
    if (this.closing) throw refuse('shutting_down', 'ingress is shutting down');
    if (this.pending.size > this.o.maxPending)
      throw refuse('max_pending', `more than ${this.o.maxPending} requests pending`);
    if (kind === 'output' || kind === 'attach') {
      if (req.method !== 'GET')
        throw new HttpError(405, 'bad_request', `use GET for /invocations/{id}/${kind}`);
      const [, invocationId, action, ...rest] = segments;
      if (invocationId === undefined || (action !== 'output' && action !== 'attach') || rest.length > 0) {
        throw new HttpError(
          404,
          'not_found',
          'expected /invocations/{id}/output or /invocations/{id}/attach',
        );
      }
      if (!isInvocationId(invocationId))
        throw new HttpError(400, 'bad_request', `malformed invocation id "${invocationId}"`);
      setInvocationId(invocationId);
      setStage('routing');
      const partition = await this.partitionOf(invocationId, signal);
      setInvocationId(invocationId, partition);
      setStage('processor');
      const res = await this.dispatcher.getOutput(invocationId, partition, kind === 'attach', signal, span);
      if (res.result === 'notFound')
        throw new HttpError(404, 'not_found', `invocation ${invocationId} not found`);
      if (res.result === 'pending')
        return { status: 202, body: { invocationId, status: 'Pending' }, outcome: 'ok' };
      return outputAnswer(res.output);
    }
    if (req.method !== 'POST') throw new HttpError(405, 'bad_request', 'use POST to call a handler');
    const target = parseTarget(segments);
    // Bug switch idempotency-key-ignored: the key read from the wrong header (never sent).
    const idempotencyKey = headerValue(
      req.headers[this.o.bugs.has('idempotency-key-ignored') ? 'idempotency_key' : 'idempotency-key'],
    );
    const keyProblem =
      (target.key !== '' ? checkKey(target.key) : undefined) ??
      (idempotencyKey !== undefined ? checkIdempotencyKey(idempotencyKey) : undefined);
    if (keyProblem) {
      req.resume();
      throw badArgument(keyProblem);
    }
    const body = await readBody(req, this.o.maxBodyBytes);
    const text = body.length === 0 ? 'null' : body.toString('utf8');
    let args: unknown;
    try {
      args = JSON.parse(text);
    } catch (e) {
      throw new HttpError(
        400,
        'bad_request',
        `malformed JSON body: ${(e as Error).message}`,
        {},
        undefined,
        'body',
      );
    }
    const argumentProblem = checkHandlerInput(target.service, target.handler, args);
    if (argumentProblem) throw badArgument(argumentProblem);
    const invocationId = makeInvocationId(target, idempotencyKey);
    setInvocationId(invocationId);
    setStage('routing');
    const partition = await this.partitionOf(invocationId, signal);
    setInvocationId(invocationId, partition);
    setStage('processor');
    const input: SubmitInput = {
      invocationId,
      partition,
      service: target.service,
      key: target.key,
      handler: target.handler,
      payload: Buffer.from(text, 'utf8'),
      idempotencyKey: idempotencyKey ?? '',
      replyOn: kind === 'send' ? 'SUBMITTED' : 'OUTPUT',
      traceparent: traceparentOf(span) || wellFormedTraceparent(headerValue(req.headers.traceparent)),
    };
    const res = this.legacy
      ? await this.legacy.submit(input, signal)
      : await this.dispatcher.submit(input, signal, span);
    if (res.result === 'submitted') {
      return {
        status: 202,
        body: { invocationId, status: res.submitted.isNew ? 'Accepted' : 'PreviouslyAccepted' },
        outcome: 'ok',
      };
    }
    return outputAnswer(res.output);
  }

  /** The partition of an invocation; waits (bounded by the request's signal) for the first table. */
  private async partitionOf(invocationId: string, signal: AbortSignal): Promise<number> {
    for (;;) {
      signal.throwIfAborted();
      const p = this.router.partitionOfInvocation(invocationId);
      if (p !== undefined) return p;
      await this.router.waitForChange(1000, signal);
    }
  }
}

function outputAnswer(output: w.Output): { status: number; body: unknown; outcome: string } {
  if (output.success) {
    const text = output.value.toString('utf8');
    return { status: 200, body: text === '' ? null : (JSON.parse(text) as unknown), outcome: 'ok' };
  }
  return {
    status: 500,
    body: { error: output.failure, invocationId: output.invocationId },
    outcome: 'failed',
  };
}

/** A client's traceparent header if it has the W3C form, else '' (never stored as given). */
function wellFormedTraceparent(v: string | undefined): string {
  return v !== undefined && v.length <= limits.traceparentCharsMax && TRACEPARENT.test(v) ? v : '';
}
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$/;

function parseTarget(segments: string[]): { service: string; key: string; handler: string } {
  if (segments.length > limits.pathSegmentsMax)
    throw new HttpError(404, 'not_found', `a path has at most ${limits.pathSegmentsMax} segments`);
  const parts = segments[segments.length - 1] === 'send' ? segments.slice(0, -1) : segments;
  const service = parts[0];
  if (service === undefined) throw new HttpError(404, 'not_found', 'no service named');
  const info = Object.hasOwn(catalogue, service) ? catalogue[service] : undefined;
  if (!info) throw new HttpError(404, 'not_found', `unknown service "${service}"`);
  const expected = info.keyed ? 3 : 2;
  if (parts.length !== expected) {
    const shape = info.keyed ? `/${service}/{key}/{handler}` : `/${service}/{handler}`;
    throw new HttpError(404, 'not_found', `${service} is called as ${shape}[/send]`);
  }
  const key = info.keyed ? (parts[1] as string) : '';
  const handler = parts[expected - 1] as string;
  if (!lookupHandler(service, handler))
    throw new HttpError(404, 'not_found', `unknown handler "${service}/${handler}"`);
  return { service, key, handler };
}

function headerValue(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > limit) {
      req.resume();
      reject(
        new HttpError(413, 'bad_request', `body over the limit of ${limit} bytes`, { connection: 'close' }),
      );
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(
          new HttpError(413, 'bad_request', `body over the limit of ${limit} bytes`, { connection: 'close' }),
        );
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body ?? null);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
