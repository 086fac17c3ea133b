// The invoker runs on the leader only: it executes the handler of every invocation that is
// invoked but not ended — including those a previous leader left running — and proposes
// their End. Execution is at least once; the effect is applied exactly once because the
// state machine ignores a second End and fences Ends from deposed leaders.
//
//   invoked effect ─▶ queue (per key for keyed services) ─▶ handler ─▶ propose End
//                                                      ▲                 │
//                                    ended effect ─────┴── next of key ◀─┘
// Keyed invocations run one at a time per key, in log order, each seeing the state left
// by the previous one's applied End.
import { lookupHandler } from '../../protocol/catalogue.js';
import type { EndRecord } from '../../protocol/records.js';
import { SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { spanAttributes as A, spanNames } from '../../protocol/names.js';
import type { Logger } from '../../telemetry/logger.js';
import { contextFromTraceparent } from '../../telemetry/tracing.js';
import { Backoff, sleep } from '../../util/backoff.js';
import { Fifo } from '../../util/fifo.js';
import { findHandler, HandlerError } from './handlers.js';
import type { InvocationState } from './state-machine.js';

export interface InvokerOptions {
  /** Appends the End (with this leader's epoch and next seq); rejects if the append failed. */
  proposeEnd(end: Omit<EndRecord, 'type' | 'proposal'>, span: Span): Promise<void>;
  getState(key: string): string | undefined;
  logger: Logger;
  tracer: Tracer;
  partition: number;
  epoch: number;
  /** Bound on handlers running at once on this partition. */
  maxConcurrent?: number;
}

export class Invoker {
  private readonly abort = new AbortController();
  private readonly keyQueues = new Map<string, Fifo<InvocationState>>();
  private readonly scheduled = new Set<string>();
  private readonly waiting = new Fifo<InvocationState>();
  private running = 0;
  private readonly maxConcurrent: number;

  constructor(private readonly options: InvokerOptions) {
    this.maxConcurrent = options.maxConcurrent ?? 1000;
  }

  /** An invocation is invoked and not ended: run it once its turn comes. */
  schedule(inv: InvocationState): void {
    if (this.abort.signal.aborted || this.scheduled.has(inv.invocationId)) return;
    this.scheduled.add(inv.invocationId);
    const info = lookupHandler(inv.service, inv.handler);
    if (info?.keyed) {
      const qk = `${inv.service}/${inv.key}`;
      const q = this.keyQueues.get(qk);
      if (q) {
        q.push(inv);
        return;
      }
      this.keyQueues.set(qk, Fifo.of(inv));
    }
    this.enqueue(inv);
  }

  /**
   * Bug switch never-resumes: takes the invocation's place in its key's queue without ever
   * starting it, so the key stays locked.
   */
  hold(inv: InvocationState): void {
    if (this.abort.signal.aborted || this.scheduled.has(inv.invocationId)) return;
    this.scheduled.add(inv.invocationId);
    const qk = `${inv.service}/${inv.key}`;
    const q = this.keyQueues.get(qk);
    if (q) q.push(inv);
    else this.keyQueues.set(qk, Fifo.of(inv));
  }

  /** The End of an invocation was applied: the next one of its key may start. */
  ended(inv: InvocationState): void {
    this.scheduled.delete(inv.invocationId);
    const qk = `${inv.service}/${inv.key}`;
    const q = this.keyQueues.get(qk);
    if (!q || q.peek()?.invocationId !== inv.invocationId) return;
    q.shift();
    const next = q.peek();
    if (next) this.enqueue(next);
    else this.keyQueues.delete(qk);
  }

  stop(): void {
    this.abort.abort(new Error('invoker stopped'));
    this.keyQueues.clear();
    this.waiting.clear();
  }

  private enqueue(inv: InvocationState): void {
    if (this.running >= this.maxConcurrent) {
      this.waiting.push(inv);
      return;
    }
    this.running++;
    void this.run(inv).finally(() => {
      this.running--;
      const next = this.waiting.shift();
      if (next && !this.abort.signal.aborted) this.enqueue(next);
    });
  }

  private async run(inv: InvocationState): Promise<void> {
    const signal = this.abort.signal;
    const span = this.options.tracer.startSpan(
      spanNames.invoke(inv.service, inv.handler),
      {
        attributes: {
          [A.invocationId]: inv.invocationId,
          [A.partition]: this.options.partition,
          [A.leaderEpoch]: this.options.epoch,
        },
      },
      contextFromTraceparent(inv.traceparent),
    );
    const backoff = new Backoff();
    let end: Omit<EndRecord, 'type' | 'proposal'> | undefined;
    let attempt = 0;
    while (!signal.aborted && end === undefined) {
      end = await this.attempt(inv, ++attempt, signal);
      if (end === undefined) await sleep(backoff.next(), signal).catch(() => undefined);
    }
    span.setAttribute(A.handlerAttempts, attempt);
    backoff.reset();
    while (end !== undefined && !signal.aborted) {
      try {
        await this.options.proposeEnd(end, span);
        if (!end.success) span.setStatus({ code: SpanStatusCode.ERROR, message: end.failure });
        span.end();
        return;
      } catch (err) {
        this.options.logger.warn('proposing End failed, retrying', {
          invocationId: inv.invocationId,
          error: err,
        });
        await sleep(backoff.next(), signal).catch(() => undefined);
      }
    }
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'leadership lost before the End was proposed' });
    span.end();
  }

  /** One execution; undefined means "retry later". */
  private async attempt(
    inv: InvocationState,
    attempt: number,
    signal: AbortSignal,
  ): Promise<Omit<EndRecord, 'type' | 'proposal'> | undefined> {
    const base = { invocationId: inv.invocationId };
    const handler = findHandler(inv.service, inv.handler);
    if (!handler) {
      return {
        ...base,
        success: false,
        value: '',
        failure: `unknown handler ${inv.service}/${inv.handler}`,
        stateUpdates: [],
      };
    }
    let input: unknown;
    try {
      input = inv.payload === '' ? null : JSON.parse(inv.payload);
    } catch {
      return { ...base, success: false, value: '', failure: 'payload is not JSON', stateUpdates: [] };
    }
    try {
      const result = await handler({
        key: inv.key,
        input,
        attempt,
        getState: (k) => this.options.getState(k),
        signal,
      });
      return {
        ...base,
        success: true,
        value: JSON.stringify(result.value ?? null),
        failure: '',
        stateUpdates: result.stateUpdates,
      };
    } catch (err) {
      if (err instanceof HandlerError) {
        return { ...base, success: false, value: '', failure: err.message, stateUpdates: [] };
      }
      if (!signal.aborted) {
        this.options.logger.debug('handler attempt failed', {
          invocationId: inv.invocationId,
          attempt,
          error: err,
        });
      }
      return undefined;
    }
  }
}
