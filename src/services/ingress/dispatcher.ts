// The fixed protocol: request/response to the partition's leader, resent until answered.
//
//   attempt ─▶ leader from the table (or the last NOT_LEADER hint)
//      ├─ answer ─────────────────────────────▶ done
//      ├─ NOT_LEADER / LOST_LEADERSHIP / INTERNAL ─┐
//      ├─ connection lost (keepalive, reset) ──────┼─▶ backoff (50 ms doubling, cap 1 s) ─▶ resend
//      └─ per-attempt deadline ────────────────────┘      same request id, same invocation id
// A backoff ends early when the partition table changes, and a new leader (a higher epoch in
// the table) starts the backoff afresh: a request resent into an outage reaches the new leader
// as soon as the table names it, not a whole doubled backoff later.
// Resending is always safe: the invocation id makes a resend attach to the invocation the
// first attempt may have created, and the request id lets the leader hand a resend the
// reply slot of the attempt still in flight.
import { randomUUID } from 'node:crypto';
import type { ResendReason } from '../../protocol/names.js';
import { grpc } from '../../transport/grpc.js';
import type * as w from '../../protocol/wire.js';
import { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { spanAttributes as A, spanNames, type IngressRpc } from '../../protocol/names.js';
import type { Logger } from '../../telemetry/logger.js';
import type { BugName } from '../bugs.js';
import { contextOf, traceparentOf } from '../../telemetry/tracing.js';
import { Backoff } from '../../util/backoff.js';
import type { IngressMetrics } from './metrics.js';
import type { Router } from './router.js';

export interface DispatcherOptions {
  router: Router;
  metrics: IngressMetrics;
  logger: Logger;
  tracer: Tracer;
  /** Per-attempt deadline of calls that answer at once (Submit SUBMITTED, GetOutput without block). */
  rpcTimeoutMs: number;
  /** Per-attempt deadline of calls that wait for an output (Submit OUTPUT, blocking GetOutput). */
  longPollMs: number;
  /** Bug switches (src/services/bugs.ts). */
  bugs?: ReadonlySet<BugName>;
}

export interface SubmitInput {
  invocationId: string;
  partition: number;
  service: string;
  key: string;
  handler: string;
  payload: Buffer;
  idempotencyKey: string;
  replyOn: 'SUBMITTED' | 'OUTPUT';
  traceparent: string;
}

type Ok<R> = Exclude<R, { result: 'error' }>;

export class Dispatcher {
  constructor(private readonly o: DispatcherOptions) {}

  submit(input: SubmitInput, signal: AbortSignal, parent: Span): Promise<Ok<w.SubmitResponse>> {
    const requestId = randomUUID();
    const timeoutMs = input.replyOn === 'OUTPUT' ? this.o.longPollMs : this.o.rpcTimeoutMs;
    return this.withResends(
      'submit',
      input.partition,
      input.invocationId,
      signal,
      parent,
      (client, attempt) =>
        client.submit(
          { requestId, ...input, traceparent: traceparentOf(attempt) || input.traceparent },
          { timeoutMs, signal },
        ),
    );
  }

  getOutput(
    invocationId: string,
    partition: number,
    block: boolean,
    signal: AbortSignal,
    parent: Span,
  ): Promise<Ok<w.GetOutputResponse>> {
    const req: w.GetOutputRequest = { requestId: randomUUID(), invocationId, partition, block };
    const timeoutMs = block ? this.o.longPollMs : this.o.rpcTimeoutMs;
    return this.withResends('get_output', partition, invocationId, signal, parent, (client) =>
      client.getOutput(req, { timeoutMs, signal }),
    );
  }

  private async withResends<R extends { result: string }>(
    rpc: IngressRpc,
    partition: number,
    invocationId: string,
    signal: AbortSignal,
    parent: Span,
    call: (client: ReturnType<Router['client']>, attemptSpan: Span) => Promise<R>,
  ): Promise<Exclude<R, { result: 'error' }>> {
    const { router, metrics } = this.o;
    const p = String(partition);
    // Bug switch resend-storm: a fixed 50 ms between resends, never backing off.
    const backoff =
      this.o.bugs?.has('resend-storm') === true ? new Backoff({ initialMs: 50, maxMs: 50 }) : new Backoff();
    let hint: string | undefined;
    let reason: ResendReason | '' = '';
    let attempt = 0;
    let epoch: number | undefined;
    // Resending from its first resend to its answer: the resending gauge and resent counter.
    let resending = false;
    const resend = (why: ResendReason): void => {
      metrics.resends.inc({ partition: p, reason: why });
      if (resending) return;
      resending = true;
      metrics.resending.inc({ partition: p });
      metrics.resentRequests.inc({ partition: p });
    };
    // Every failure below is followed by a backoff and a resend, counted by its reason.
    try {
      for (;;) {
        signal.throwIfAborted();
        const route = router.leaderFor(partition);
        if (route !== undefined && epoch !== undefined && route.epoch > epoch) backoff.reset();
        if (route !== undefined) epoch = Math.max(epoch ?? 0, route.epoch);
        const address = hint ?? route?.address;
        hint = undefined;
        if (address === undefined) {
          resend('unavailable');
          await router.waitForChange(backoff.next(), signal);
          continue;
        }
        let result: string;
        let final: Error | undefined;
        attempt++;
        const span = this.o.tracer.startSpan(
          spanNames.ingressAttempt(rpc),
          {
            kind: SpanKind.CLIENT,
            attributes: {
              [A.invocationId]: invocationId,
              [A.partition]: partition,
              [A.attempt]: attempt,
              [A.resendReason]: reason,
              [A.leaderEpoch]: route?.epoch ?? 0,
              [A.targetAddress]: address,
            },
          },
          contextOf(parent),
        );
        try {
          const res = await call(router.client(address), span);
          if (res.result !== 'error') {
            metrics.rpcAttempts.inc({ partition: p, rpc, result: 'ok' });
            span.end();
            return res as Exclude<R, { result: 'error' }>;
          }
          const err = (res as unknown as { error: w.RpcError }).error;
          // Bug switch lost-leadership-is-final: a lost leadership is answered, not resent.
          if (err.code === 'LOST_LEADERSHIP' && this.o.bugs?.has('lost-leadership-is-final') === true)
            final = new Error(`leadership lost; the request may have gone through (${err.message})`);
          result = err.code.toLowerCase();
          reason =
            err.code === 'NOT_LEADER'
              ? 'not_leader'
              : err.code === 'LOST_LEADERSHIP'
                ? 'lost_leadership'
                : 'unavailable';
          if (err.code === 'NOT_LEADER' && err.leaderNode !== '' && err.leaderNode !== route?.node) {
            hint = router.addressOf(err.leaderNode);
          }
        } catch (e) {
          if (signal.aborted) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: 'aborted' });
            span.end();
          }
          signal.throwIfAborted();
          const code = (e as { code?: number }).code;
          reason = code === grpc.status.DEADLINE_EXCEEDED ? 'timeout' : 'connection_lost';
          result = reason;
          this.o.logger.debug('attempt failed', { rpc, partition, address, error: e });
        }
        metrics.rpcAttempts.inc({ partition: p, rpc, result });
        span.setStatus({ code: SpanStatusCode.ERROR, message: result });
        span.end();
        if (final !== undefined) throw final;
        resend(reason);
        await router.waitForChange(backoff.next(), signal);
        signal.throwIfAborted();
      }
    } finally {
      if (resending) metrics.resending.dec({ partition: p });
    }
  }
}
