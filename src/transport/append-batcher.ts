// The log client's appends travel together: the appends its callers make while earlier ones
// are on the wire go as one Log.AppendBatch call, each still answered on its own (its LSN
// range, or the status it failed with). Under load the log server then decodes, schedules
// and answers one call per batch instead of one per append, and the batch's appends land in
// the same group commit; an append made while the line is free goes at once, alone, so a
// lone caller waits no longer than before.
//
//   append ─▶ queue ─(a call slot is free)─▶ AppendBatch [items…] ─▶ results[i] ─▶ append i
//
// A batch leaves on the next turn of the event loop, so that the appends made in one job
// (the callers a batch's answer just released) go together.
//
// Each append keeps its own trace context (the `traceparent` of its metadata travels in its
// item: the server's `log append` span is still one per append, child of the caller's span),
// its own deadline (answered DEADLINE_EXCEEDED when its time is up, queued or on the wire;
// the batch call has none of its own. One timer per batcher, armed for the earliest deadline
// of the appends not yet answered, instead of one per append: appends are answered in about a
// millisecond and time out after seconds), and its own AbortSignal
// (an aborted append is answered CANCELLED at once: still queued, it is skipped when its turn
// comes, never sent). A batch on the wire whose appends have all been answered so is cancelled.
import { status } from '@grpc/grpc-js';
import type * as w from '../protocol/wire.js';
import { Fifo } from '../util/fifo.js';
import { statusError, type StatusError } from './mux-stream.js';

/** The error an append rejects with: shaped as a grpc-js ServiceError (code, details, message). */
/** An append's failure: a gRPC status code and its details (mux-stream.ts). */
export type AppendError = StatusError;

export interface BatchCall {
  /** Resolves with one result per item, in order; rejects (a ServiceError) when the call fails. */
  readonly done: Promise<w.AppendBatchResponse>;
  cancel(): void;
}

export interface AppendBatcherOptions {
  /** Sends one AppendBatch call. */
  send(request: w.AppendBatchRequest): BatchCall;
  /** Batch calls on the wire at once (default 4). */
  maxInFlight?: number;
  /** Items per batch (default 512). */
  maxItems?: number;
  /** Record bytes per batch; a larger single append still goes, alone (default 4 MiB). */
  maxBytes?: number;
  /** The clock the deadlines are kept on: a steady one (default performance.now), never the wall clock. */
  now?: () => number;
}

interface Pending {
  item: w.AppendItem;
  bytes: number;
  /** On the batcher's steady clock (`now`). */
  deadline: number | undefined;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** The batch it went out in, while that is on the wire. */
  batch: Batch | undefined;
  settled: boolean;
  resolve(res: w.AppendResponse): void;
  reject(err: AppendError): void;
}

interface Batch {
  items: Pending[];
  call: BatchCall;
}

/** A ServiceError-shaped error for status `code` (grpc-js formats its own messages the same way). */
export const appendError = statusError;

export class AppendBatcher {
  /** Appends waiting for a batch; one given up on stays until reached, skipped then. */
  private readonly queue = new Fifo<Pending>();
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly maxItems: number;
  private readonly maxBytes: number;
  private readonly now: () => number;
  private calls = 0;
  private appends = 0;
  /** Batches on the wire. */
  private readonly onWire = new Set<Batch>();
  /** Appends with a deadline not yet answered, and the one timer for the earliest deadline. */
  private timed = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  constructor(private readonly o: AppendBatcherOptions) {
    this.maxInFlight = o.maxInFlight ?? 4;
    this.maxItems = o.maxItems ?? 512;
    this.maxBytes = o.maxBytes ?? 4 * 1024 * 1024;
    // A steady clock: a wall clock set back an hour must not hold an append for that hour.
    this.now = o.now ?? (() => performance.now());
  }

  /** AppendBatch calls sent and appends they carried, since the client was made. */
  get stats(): { calls: number; appends: number } {
    return { calls: this.calls, appends: this.appends };
  }

  append(
    req: w.AppendRequest,
    options: { timeoutMs?: number; signal?: AbortSignal; traceparent?: string },
  ): Promise<w.AppendResponse> {
    return new Promise<w.AppendResponse>((resolve, reject) => {
      const signal = options.signal;
      if (signal?.aborted) {
        reject(appendError(status.CANCELLED, 'Cancelled on client'));
        return;
      }
      let bytes = 0;
      for (const r of req.records) bytes += r.length;
      const p: Pending = {
        item: { partition: req.partition, records: req.records, traceparent: options.traceparent ?? '' },
        bytes,
        deadline: options.timeoutMs !== undefined ? this.now() + options.timeoutMs : undefined,
        signal,
        onAbort: undefined,
        batch: undefined,
        settled: false,
        resolve,
        reject,
      };
      if (signal) {
        p.onAbort = () => this.giveUp(p, appendError(status.CANCELLED, 'Cancelled on client'));
        signal.addEventListener('abort', p.onAbort, { once: true });
      }
      if (p.deadline !== undefined) {
        this.timed++;
        this.armFor(p.deadline);
      }
      this.queue.push(p);
      this.schedule();
    });
  }

  private settle(p: Pending): boolean {
    if (p.settled) return false;
    p.settled = true;
    if (p.onAbort) p.signal?.removeEventListener('abort', p.onAbort);
    // The last timed append answered: nothing is left for the timer (nor for it to hold the process).
    if (p.deadline !== undefined && --this.timed === 0) this.disarm();
    return true;
  }

  /** Makes sure the timer fires by `deadline`. */
  private armFor(deadline: number): void {
    if (deadline >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = deadline;
    this.timer = setTimeout(() => this.expire(), Math.max(0, deadline - this.now()));
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  /** Answers every append whose deadline has passed, and arms the timer for the next deadline. */
  private expire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.now();
    let next = Infinity;
    const check = (p: Pending): void => {
      if (p.settled || p.deadline === undefined) return;
      if (p.deadline <= now) this.giveUp(p, appendError(status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
      else next = Math.min(next, p.deadline);
    };
    for (const p of this.queue) check(p);
    for (const batch of [...this.onWire]) batch.items.forEach(check);
    if (next !== Infinity) this.armFor(next);
  }

  /** Answers `p` with `err` now: skipped when its turn in the queue comes, or its batch cancelled once nobody waits on it. */
  private giveUp(p: Pending, err: AppendError): void {
    if (!this.settle(p)) return;
    p.reject(err);
    const batch = p.batch;
    if (batch && batch.items.every((q) => q.settled)) batch.call.cancel();
  }

  private scheduled = false;

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.maxInFlight && this.queue.length > 0) this.sendOne();
    });
  }

  /** Takes the next batch off the front of the queue and sends it. */
  private sendOne(): void {
    const items: Pending[] = [];
    let bytes = 0;
    while (this.queue.length > 0 && items.length < this.maxItems) {
      const p = this.queue.peek() as Pending;
      if (p.settled) {
        this.queue.shift(); // given up on (deadline, abort) while it waited
        continue;
      }
      if (items.length > 0 && bytes + p.bytes > this.maxBytes) break;
      this.queue.shift();
      items.push(p);
      bytes += p.bytes;
    }
    if (items.length === 0) return;
    this.inFlight++;
    this.calls++;
    this.appends += items.length;
    const call = this.o.send({ items: items.map((p) => p.item) });
    const batch: Batch = { items, call };
    this.onWire.add(batch);
    for (const p of items) p.batch = batch;
    void call.done
      .then(
        (res) => {
          items.forEach((p, i) => {
            if (!this.settle(p)) return;
            const r = res.results[i];
            if (r === undefined)
              p.reject(
                appendError(
                  status.INTERNAL,
                  `the log server answered ${res.results.length} of ${items.length} appends`,
                ),
              );
            else if (r.code !== 0) p.reject(appendError(r.code, r.message));
            else p.resolve({ firstLsn: r.firstLsn, lastLsn: r.lastLsn });
          });
        },
        (err: AppendError) => {
          for (const p of items) if (this.settle(p)) p.reject(err);
        },
      )
      .finally(() => {
        this.onWire.delete(batch);
        for (const p of items) p.batch = undefined;
        this.inFlight--;
        if (this.queue.length > 0) this.schedule();
      });
  }
}
