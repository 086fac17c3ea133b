// One client op against the ingress HTTP API (DESIGN.md §1), recorded invoke → ok | fail | info.
// An op never throws: an answer that proves nothing happened is `fail` (4xx, 503, connection
// refused), anything that leaves the outcome unknown is `info` (timeouts, broken connections,
// 504 and other 5xx), with the invocation id whenever it is known. Paths and ids follow the
// target's client API (client-api.ts): the reference ingress by default.
// A call, send or counter add may be given up by its client (give-up.ts): the request is
// abandoned before its answer and recorded as info (code `aborted`: outcome unknown), then,
// with retry 'same-key', made once more with the same idempotency key as an op of its own.
import type { Tracer } from '@opentelemetry/api';
import type { OpKind, OpRequest, OpResponse } from '../run-data/run-data.js';
import type { Random } from '../util/random.js';
import { httpRequestOf, referenceClientApi, type ClientApi } from './client-api.js';
import { startClientSpan, type ClientSpan } from './client-span.js';
import type { GiveUpDraws } from './give-up.js';
import type { Completion, HistoryRecorder } from './history.js';
import { HttpClientError, type HttpAnswer, type HttpClient } from './http-client.js';
import { messageOf } from '../util/errors.js';
import { sleep } from '../util/backoff.js';

export interface OpContext {
  http: HttpClient;
  history: HistoryRecorder;
  random: Random;
  /** The client (Jepsen process) number. */
  process: number;
  baseUrl: string;
  opTimeoutMs: number;
  counterKeys: readonly string[];
  /** A per-client counter for unique idempotency keys. */
  nextKey(): string;
  signal?: AbortSignal;
  /** The target's ingress API (default: the reference ingress's). */
  api?: ClientApi;
  /** Exports one client span per op (service `client`), the root of the op's trace. */
  tracer?: Tracer;
  /** send: wait this long after the send was accepted before attaching (bounded by the abort). */
  attachAfterMs?: number;
  /** counterAdd: the add holds its key for a uniform 0..counterHoldMs ms (absent: no hold). */
  counterHoldMs?: number;
  /** The client's give-up decisions (call, send, counterAdd); absent: it always waits. */
  giveUp?: GiveUpDraws;
}

/** When an op's client gives up: `afterMs` after the op began, i.e. at `atMs` (performance.now). */
interface OpGiveUp {
  afterMs: number;
  atMs: number;
}

/** The op's give-up, drawn once as it begins (before any await, so the order is the ops' order). */
function drawGiveUp(ctx: OpContext): OpGiveUp | undefined {
  const afterMs = ctx.giveUp?.next();
  return afterMs === undefined ? undefined : { afterMs, atMs: performance.now() + afterMs };
}

/** What is left of an op's wait before its client gives up (undefined: it waits to the end). */
function giveUpLeftMs(giveUp: OpGiveUp | undefined): number | undefined {
  return giveUp === undefined ? undefined : Math.max(0, giveUp.atMs - performance.now());
}

function gaveUp(giveUp: OpGiveUp, invocationId?: string): Completion {
  return {
    type: 'info',
    ...(invocationId !== undefined ? { invocationId } : {}),
    error: {
      code: 'aborted',
      message: `the client gave up ${giveUp.afterMs} ms after the op began, before the answer (outcome unknown)`,
    },
    gaveUp: true,
  };
}

/** Whether the client sends an abandoned op's request again (same key), the run still going. */
function retriesAfter(ctx: OpContext, c: Completion): boolean {
  return c.gaveUp === true && ctx.giveUp?.retry === 'same-key' && ctx.signal?.aborted !== true;
}

export { REFERENCE_INVOCATION_ID_HEADER as INVOCATION_ID_HEADER } from './client-api.js';

interface Call {
  service: string;
  key: string;
  handler: string;
  body: unknown;
}

const apiOf = (ctx: OpContext): ClientApi => ctx.api ?? referenceClientApi;

function pickCall(random: Random): Call {
  const which = random.weighted({ echo: 6, sleep: 3, flaky: 1 });
  if (which === 'echo')
    return { service: 'Echo', key: '', handler: 'echo', body: { n: random.int(1_000_000) } };
  if (which === 'sleep')
    return { service: 'Sleep', key: '', handler: 'sleep', body: { ms: random.between(10, 200) } };
  return { service: 'Flaky', key: '', handler: 'call', body: { failFirst: random.between(0, 2) } };
}

/** Classifies an HTTP answer into a completion. */
export function classify(answer: HttpAnswer, withValue = false, api = referenceClientApi): Completion {
  const response: OpResponse = { status: answer.status, body: answer.body };
  if (withValue) {
    const v = api.counterValue(answer.body);
    if (v !== undefined) response.value = v;
  }
  const invocationId = api.idFrom(answer);
  const base = invocationId !== undefined ? { invocationId, response } : { response };
  const said = api.outcome?.(answer);
  if (said === 'ok') return { type: 'ok', ...base };
  if (said === 'fail')
    return { type: 'fail', ...base, error: { code: 'http_status', message: `HTTP ${answer.status}` } };
  if (said === 'unknown')
    return { type: 'info', ...base, error: { code: 'http_status', message: `HTTP ${answer.status}` } };
  if (answer.status >= 200 && answer.status < 300) return { type: 'ok', ...base };
  if (answer.status === 504)
    return {
      type: 'info',
      ...base,
      error: { code: 'deadline_exceeded', message: 'ingress deadline passed' },
    };
  if (answer.status >= 500 && answer.status !== 503)
    return { type: 'info', ...base, error: { code: 'http_status', message: `HTTP ${answer.status}` } };
  return { type: 'fail', ...base, error: { code: 'http_status', message: `HTTP ${answer.status}` } };
}

/**
 * A thrown request error as a completion: refused means never sent (fail), else unknown (info).
 * The run's stop (`aborted`) leaves the op open; a client giving up (`gave_up`) is info with
 * code `aborted`.
 */
export function classifyError(err: unknown, giveUp?: OpGiveUp): Completion {
  if (err instanceof HttpClientError) {
    if (err.clientCode === 'connection_refused')
      return { type: 'fail', error: { code: 'connection_error', message: err.message } };
    if (err.clientCode === 'gave_up')
      return giveUp !== undefined
        ? gaveUp(giveUp)
        : { type: 'info', error: { code: 'aborted', message: err.message }, gaveUp: true };
    if (err.clientCode === 'aborted')
      return { type: 'info', error: { code: 'aborted', message: err.message }, keepOpen: true };
    return {
      type: 'info',
      error: {
        code: err.clientCode === 'client_timeout' ? 'client_timeout' : 'connection_error',
        message: err.message,
      },
    };
  }
  return {
    type: 'info',
    error: { code: 'bad_response', message: messageOf(err) },
  };
}

/**
 * Every op starts its own trace with its client span: the client sends its W3C traceparent,
 * so the ingress's spans (and every span after them, on any leader) share the op's trace id —
 * known even when the op never gets an answer.
 */
function invokeTraced(
  ctx: OpContext,
  kind: OpKind,
  request: OpRequest,
  invocationId: string | undefined,
): { opId: number; span: ClientSpan } {
  const span = startClientSpan(ctx.tracer, kind, ctx.process, invocationId);
  const opId = ctx.history.invoke(ctx.process, kind, request, invocationId, span.traceId);
  span.setOpId(opId);
  return { opId, span };
}

async function exchange(
  ctx: OpContext,
  kind: OpKind,
  request: OpRequest,
  invocationId: string | undefined,
  withValue = false,
  giveUp?: OpGiveUp,
): Promise<Completion> {
  const { opId, span: trace } = invokeTraced(ctx, kind, request, invocationId);
  let completion: Completion;
  try {
    const headers: Record<string, string> = { traceparent: trace.traceparent };
    if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
    const leftMs = giveUpLeftMs(giveUp);
    const answer = await ctx.http.request(ctx.baseUrl + request.path, {
      method: request.method,
      headers,
      body: request.body,
      timeoutMs: ctx.opTimeoutMs,
      signal: ctx.signal,
      ...(leftMs !== undefined ? { giveUpAfterMs: leftMs } : {}),
    });
    completion = classify(answer, withValue, apiOf(ctx));
  } catch (err) {
    completion = classifyError(err, giveUp);
  }
  finish(ctx, opId, completion, trace);
  return completion;
}

/** Records the completion, except for ops the run's stop aborted: those stay open (hung). */
function finish(ctx: OpContext, opId: number, completion: Completion, span: ClientSpan): void {
  span.end(completion);
  if (completion.keepOpen === true) return;
  ctx.history.complete(opId, completion);
}

/**
 * A call with an idempotency key, so its invocation id is known even if it never answers. A
 * plain call (kind `call`) may be given up, then made again with the same key.
 */
export async function callOp(
  ctx: OpContext,
  kind: OpKind = 'call',
  key = ctx.nextKey(),
): Promise<Completion> {
  const c = pickCall(ctx.random);
  const giveUp = kind === 'call' ? drawGiveUp(ctx) : undefined;
  const api = apiOf(ctx);
  const id = api.invocationIdFor(c, key);
  const http = httpRequestOf(api, { op: 'call', target: c, body: c.body, idempotencyKey: key });
  const request: OpRequest = { ...http, idempotencyKey: key };
  const first = await exchange(ctx, kind, request, id, false, giveUp);
  return retriesAfter(ctx, first) ? exchange(ctx, kind, request, id) : first;
}

/**
 * A send then an attach, recorded as one op: ok once the attach answers with the output. Its
 * client may give up during either request (or before the attach), then send again with the
 * same key and attach once more, as a second op.
 */
export async function sendOp(ctx: OpContext, key = ctx.nextKey()): Promise<Completion> {
  const c = pickCall(ctx.random);
  const giveUp = drawGiveUp(ctx);
  const first = await sendAndAttach(ctx, c, key, giveUp);
  return retriesAfter(ctx, first) ? sendAndAttach(ctx, c, key, undefined) : first;
}

async function sendAndAttach(
  ctx: OpContext,
  c: Call,
  key: string,
  giveUp: OpGiveUp | undefined,
): Promise<Completion> {
  const api = apiOf(ctx);
  const id = api.invocationIdFor(c, key);
  const request: OpRequest = {
    ...httpRequestOf(api, { op: 'send', target: c, body: c.body, idempotencyKey: key }),
    idempotencyKey: key,
  };
  const { opId, span: trace } = invokeTraced(ctx, 'send', request, id);
  let completion: Completion;
  let invocationId = id;
  try {
    const sendLeftMs = giveUpLeftMs(giveUp);
    const sent = classify(
      await ctx.http.request(ctx.baseUrl + request.path, {
        method: request.method,
        headers: { 'idempotency-key': key, traceparent: trace.traceparent },
        body: request.body,
        timeoutMs: ctx.opTimeoutMs,
        signal: ctx.signal,
        ...(sendLeftMs !== undefined ? { giveUpAfterMs: sendLeftMs } : {}),
      }),
      false,
      api,
    );
    invocationId = sent.invocationId ?? id;
    if (sent.type !== 'ok') completion = sent;
    else if (invocationId === undefined)
      completion = {
        ...sent,
        type: 'info',
        error: { code: 'bad_response', message: 'the send was accepted without an invocation id' },
      };
    else {
      // A client whose give-up falls within its wait to attach stops waiting then, unattached.
      const leftMs = giveUpLeftMs(giveUp);
      const attachAfterMs = ctx.attachAfterMs ?? 0;
      const givesUpFirst = leftMs !== undefined && (leftMs === 0 || leftMs <= attachAfterMs);
      const waitMs = givesUpFirst ? leftMs : attachAfterMs;
      if (waitMs > 0) await sleep(waitMs, ctx.signal).catch(() => undefined);
      if (giveUp !== undefined && givesUpFirst && ctx.signal?.aborted !== true)
        // Accepted, and the client gave up before attaching: the outcome is unknown to it.
        completion = gaveUp(giveUp, invocationId);
      else {
        const attachLeftMs = giveUpLeftMs(giveUp);
        const attach = httpRequestOf(api, { op: 'attach', target: c, body: undefined, invocationId });
        const attached = classify(
          await ctx.http.request(ctx.baseUrl + attach.path, {
            method: attach.method,
            headers: { traceparent: trace.traceparent },
            ...(attach.body !== undefined ? { body: attach.body } : {}),
            timeoutMs: ctx.opTimeoutMs,
            signal: ctx.signal,
            ...(attachLeftMs !== undefined ? { giveUpAfterMs: attachLeftMs } : {}),
          }),
          false,
          api,
        );
        // The invocation exists once the send was accepted: a failed attach leaves its outcome unknown.
        completion = attached.type === 'fail' ? { ...attached, type: 'info' } : attached;
        completion.invocationId = attached.invocationId ?? invocationId;
      }
    }
  } catch (err) {
    completion = classifyError(err, giveUp);
    if (completion.invocationId === undefined && invocationId !== undefined)
      completion.invocationId = invocationId;
  }
  finish(ctx, opId, completion, trace);
  return completion;
}

/**
 * Adds a small delta to a keyed counter with an idempotency key; retries once, same key, on
 * info. An attempt its client gave up on is retried so only with retry 'same-key' (with 'none'
 * the client walks away); the retry is never given up.
 */
export async function counterAddOp(ctx: OpContext, retries = 1): Promise<Completion> {
  const counterKey = ctx.random.pick(ctx.counterKeys);
  const delta = ctx.random.between(1, 5);
  const holdMs =
    ctx.counterHoldMs !== undefined && ctx.counterHoldMs > 0
      ? ctx.random.between(0, ctx.counterHoldMs)
      : undefined;
  const giveUp = drawGiveUp(ctx);
  const key = ctx.nextKey();
  const api = apiOf(ctx);
  const target = { service: 'Counter', key: counterKey, handler: 'add' };
  const id = api.invocationIdFor(target, key);
  const request: OpRequest = {
    ...httpRequestOf(api, {
      op: 'counterAdd',
      target,
      body: holdMs !== undefined ? { delta, holdMs } : { delta },
      idempotencyKey: key,
    }),
    idempotencyKey: key,
    counterKey,
    delta,
  };
  let c = await exchange(ctx, 'counterAdd', request, id, true, giveUp);
  for (let i = 0; i < retries && c.type === 'info' && ctx.signal?.aborted !== true; i++) {
    if (c.gaveUp === true && !retriesAfter(ctx, c)) break;
    c = await exchange(ctx, 'counterAdd', request, id, true);
  }
  return c;
}

export function counterGetOp(ctx: OpContext, counterKey: string, final = false): Promise<Completion> {
  const request: OpRequest = {
    ...httpRequestOf(apiOf(ctx), {
      op: 'counterGet',
      target: { service: 'Counter', key: counterKey, handler: 'get' },
      body: {},
    }),
    counterKey,
  };
  if (final) request.final = true;
  return exchange(ctx, 'counterGet', request, undefined, true);
}

/**
 * A send the client repeats with the same idempotency key (it did not see the first 202, or
 * does not trust it): the same request twice, each attached to; the ingress must answer the
 * second as the same invocation (Restate's "PreviouslyAccepted") and account for it as any other.
 * Already a same-key repeat, it is never given up.
 */
export async function sendRetryOp(ctx: OpContext): Promise<Completion> {
  const key = ctx.nextKey();
  const c = pickCall(ctx.random.fork(key));
  const first = await sendAndAttach(ctx, c, key, undefined);
  const again = await sendAndAttach(ctx, c, key, undefined);
  return again.type === 'ok' ? again : first;
}

/** The same call twice with one idempotency key: both recorded, for idempotentRetriesAgree. */
export async function idempotentRetryOp(ctx: OpContext): Promise<Completion> {
  const key = ctx.nextKey();
  const fork = ctx.random.fork(key);
  const first = await callOp({ ...ctx, random: fork }, 'idempotentRetry', key);
  const again = await callOp({ ...ctx, random: ctx.random.fork(key) }, 'idempotentRetry', key);
  return again.type === 'ok' ? again : first;
}
