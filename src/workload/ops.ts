// One client op against the ingress HTTP API (DESIGN.md §1), recorded invoke → ok | fail | info.
// An op never throws: an answer that proves nothing happened is `fail` (4xx, 503, connection
// refused), anything that leaves the outcome unknown is `info` (timeouts, broken connections,
// 504 and other 5xx), with the invocation id whenever it is known. Paths and ids follow the
// target's client API (client-api.ts): the reference ingress by default. A target whose
// clients do not speak HTTP brings a client adapter (client-adapter.ts) instead: the same ops,
// each performed by the adapter's session, bounded by the same clock.
// A call, send or counter add may be given up by its client (give-up.ts): the request is
// abandoned before its answer and recorded as info (code `aborted`: outcome unknown), then,
// with retry 'same-key', made once more with the same idempotency key as an op of its own.
import type { Tracer } from '@opentelemetry/api';
import type { OpKind, OpRequest, OpResponse } from '../run-data/run-data.js';
import type { Random } from '../util/random.js';
import type { InvocationTarget } from '../protocol/ids.js';
import { httpRequestOf, referenceClientApi, type ClientApi, type ClientOp } from './client-api.js';
import { completionOf, type AdapterClient } from './client-adapter.js';
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
  /** The target's client adapter for this client: every op goes through it instead of HTTP. */
  adapter?: AdapterClient;
  /** Exports one client span per op (service `client`), the root of the op's trace. */
  tracer?: Tracer;
  /** send: wait this long after the send was accepted before attaching (bounded by the abort). */
  attachAfterMs?: number;
  /** counterAdd: the add holds its key for a uniform 0..counterHoldMs ms (absent: no hold). */
  counterHoldMs?: number;
  /** The client's give-up decisions (call, send, counterAdd); absent: it always waits. */
  giveUp?: GiveUpDraws;
  /**
   * Invocations the system acknowledged (a call or a send answered ok with its id), with what
   * they called: the runner attaches to each once more after convergence (finalAttachOp).
   */
  acknowledged?: Map<string, Call>;
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

/** What an op invokes: the service, its key (or ''), the handler and the body. */
export interface Call {
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

/** The invocation id an op has before it is sent, if its client can know it. */
function idFor(ctx: OpContext, target: InvocationTarget, key: string | undefined): string | undefined {
  return ctx.adapter !== undefined
    ? ctx.adapter.invocationIdFor(target, key)
    : apiOf(ctx).invocationIdFor(target, key);
}

/** The op's request as the history keeps it: the HTTP request, or the op as the adapter got it. */
function recordedRequest(ctx: OpContext, op: ClientOp): OpRequest {
  const r =
    ctx.adapter !== undefined
      ? {
          method: op.op,
          path: `${ctx.adapter.name}:${op.target.service}${op.target.key === '' ? '' : `/${op.target.key}`}/${op.target.handler}`,
          ...(op.body !== undefined ? { body: op.body } : {}),
        }
      : httpRequestOf(apiOf(ctx), op);
  return { ...r, ...(op.idempotencyKey !== undefined ? { idempotencyKey: op.idempotencyKey } : {}) };
}

/**
 * One request of an op through the target's client — HTTP by its API, or its client adapter —
 * as a completion (never throws). A client that gives up stops waiting at its give-up time.
 */
async function ask(
  ctx: OpContext,
  op: ClientOp,
  traceparent: string,
  withValue: boolean,
  giveUp: OpGiveUp | undefined,
): Promise<Completion> {
  const leftMs = giveUpLeftMs(giveUp);
  if (ctx.adapter !== undefined) {
    const r = await ctx.adapter.perform(op, {
      timeoutMs: ctx.opTimeoutMs,
      traceparent,
      ...(ctx.signal !== undefined ? { runSignal: ctx.signal } : {}),
      ...(leftMs !== undefined ? { giveUpAfterMs: leftMs } : {}),
    });
    if ('result' in r) return completionOf(r.result, withValue);
    if (r.stopped === 'gave_up' && giveUp !== undefined) return gaveUp(giveUp);
    if (r.stopped === 'timeout')
      return {
        type: 'info',
        error: { code: 'client_timeout', message: `no answer within ${ctx.opTimeoutMs} ms` },
      };
    return { type: 'info', error: { code: 'aborted', message: 'request aborted' }, keepOpen: true };
  }
  const api = apiOf(ctx);
  const req = httpRequestOf(api, op);
  const headers: Record<string, string> = { traceparent };
  if (op.idempotencyKey !== undefined && op.op !== 'attach') headers['idempotency-key'] = op.idempotencyKey;
  try {
    const answer = await ctx.http.request(ctx.baseUrl + req.path, {
      method: req.method,
      headers,
      ...(req.body !== undefined ? { body: req.body } : {}),
      timeoutMs: ctx.opTimeoutMs,
      ...(ctx.signal !== undefined ? { signal: ctx.signal } : {}),
      ...(leftMs !== undefined ? { giveUpAfterMs: leftMs } : {}),
    });
    return classify(answer, withValue, api);
  } catch (err) {
    return classifyError(err, giveUp);
  }
}

async function exchange(
  ctx: OpContext,
  kind: OpKind,
  op: ClientOp,
  request: OpRequest,
  invocationId: string | undefined,
  withValue = false,
  giveUp?: OpGiveUp,
): Promise<Completion> {
  const { opId, span: trace } = invokeTraced(ctx, kind, request, invocationId);
  const completion = await ask(ctx, op, trace.traceparent, withValue, giveUp);
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
  const id = idFor(ctx, c, key);
  const op: ClientOp = { op: 'call', target: c, body: c.body, idempotencyKey: key };
  const request = recordedRequest(ctx, op);
  const first = await exchange(ctx, kind, op, request, id, false, giveUp);
  const done = retriesAfter(ctx, first) ? await exchange(ctx, kind, op, request, id) : first;
  acknowledge(ctx, done, c);
  return done;
}

/** Notes an invocation the system acknowledged, for the final attach. */
function acknowledge(ctx: OpContext, c: Completion, call: Call): void {
  if (c.type === 'ok' && c.invocationId !== undefined) ctx.acknowledged?.set(c.invocationId, call);
}

/**
 * The runner's final attach to an invocation the system acknowledged, after convergence: it must
 * still be there. Recorded as an `attach` op marked final (not client traffic); the system
 * answering that it does not exist (`fail`: a 404, or the adapter's fail) is an acknowledged
 * effect lost (acknowledgedEffectsPresent).
 */
export function finalAttachOp(ctx: OpContext, invocationId: string, c: Call): Promise<Completion> {
  const op: ClientOp = { op: 'attach', target: c, body: undefined, invocationId };
  const request: OpRequest = {
    ...(ctx.adapter !== undefined
      ? { method: 'attach', path: `${ctx.adapter.name}:attach/${invocationId}` }
      : httpRequestOf(apiOf(ctx), op)),
    final: true,
  };
  return exchange(ctx, 'attach', op, request, invocationId);
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
  const id = idFor(ctx, c, key);
  const send: ClientOp = { op: 'send', target: c, body: c.body, idempotencyKey: key };
  const { opId, span: trace } = invokeTraced(ctx, 'send', recordedRequest(ctx, send), id);
  let completion: Completion;
  const sent = await ask(ctx, send, trace.traceparent, false, giveUp);
  const invocationId = sent.invocationId ?? id;
  if (sent.type !== 'ok') completion = { ...sent, ...(invocationId !== undefined ? { invocationId } : {}) };
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
      const attach: ClientOp = { op: 'attach', target: c, body: undefined, invocationId };
      const attached = await ask(ctx, attach, trace.traceparent, false, giveUp);
      // The invocation exists once the send was accepted: a failed attach leaves its outcome unknown.
      completion = attached.type === 'fail' ? { ...attached, type: 'info' } : attached;
      completion.invocationId = attached.invocationId ?? invocationId;
    }
  }
  finish(ctx, opId, completion, trace);
  acknowledge(ctx, completion, c);
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
  const target = { service: 'Counter', key: counterKey, handler: 'add' };
  const id = idFor(ctx, target, key);
  const op: ClientOp = {
    op: 'counterAdd',
    target,
    body: holdMs !== undefined ? { delta, holdMs } : { delta },
    idempotencyKey: key,
  };
  const request: OpRequest = { ...recordedRequest(ctx, op), counterKey, delta };
  let c = await exchange(ctx, 'counterAdd', op, request, id, true, giveUp);
  for (let i = 0; i < retries && c.type === 'info' && ctx.signal?.aborted !== true; i++) {
    if (c.gaveUp === true && !retriesAfter(ctx, c)) break;
    c = await exchange(ctx, 'counterAdd', op, request, id, true);
  }
  return c;
}

export function counterGetOp(ctx: OpContext, counterKey: string, final = false): Promise<Completion> {
  const op: ClientOp = {
    op: 'counterGet',
    target: { service: 'Counter', key: counterKey, handler: 'get' },
    body: {},
  };
  const request: OpRequest = { ...recordedRequest(ctx, op), counterKey };
  if (final) request.final = true;
  return exchange(ctx, 'counterGet', op, request, undefined, true);
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
