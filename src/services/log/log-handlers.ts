// The gRPC Log service of the log server: appends (one, a batch, batches over a stream), the
// tail, and tail streams (Read). Each handler is a method over the server's store, stream
// registry, tracer, bug switches, fault hook and metrics; a Read stream is an object of its own.
//
//   Append / AppendBatch / AppendStream ─▶ appendOne ─▶ LogStore.enqueue (group commit) ─▶ answer
//   Read ─▶ TailRead: read a batch ─▶ write it ─▶ wait for the tail to move ─▶ …
import type { Tracer } from '@opentelemetry/api';
import { grpc } from '../../transport/grpc.js';
import { limits } from '../../protocol/limits.js';
import { spanAttributes as A, spanNames } from '../../protocol/names.js';
import type * as w from '../../protocol/wire.js';
import { messageOf } from '../../util/errors.js';
import type { BugName } from '../bugs.js';
import type { FaultHook } from '../fault-hooks.js';
import { badRequest, LogServerError, toServiceError } from './errors.js';
import { StreamRegistry, unaryHandler } from './grpc-handlers.js';
import type { LogMetrics } from './log-metrics.js';
import { endSpan, startLogSpan, traceparentFrom, traced } from './log-spans.js';
import type { LogStore } from './log-store.js';
import type { PartitionLog } from './partition-log.js';

/** The log.append-error fault hook: appends to these partitions refused, nothing written. */
export interface AppendErrorParams {
  partitions: ReadonlySet<number> | undefined;
}

export interface SpanContext {
  tracer: Tracer;
  node: string;
  /** Whether spans are recorded at all (else the per-append ones are not even started). */
  tracing: boolean;
}

/** Entries per Read batch and bytes per batch (a single larger record still goes alone). */
const READ_BATCH = { maxEntries: 1000, maxBytes: 1024 * 1024 };

type AppendDone = (err: Error | undefined, firstLsn: number, lastLsn: number) => void;

export class LogHandlers {
  readonly #partitions: number;

  constructor(
    private readonly store: LogStore,
    private readonly streams: StreamRegistry,
    private readonly spans: SpanContext,
    private readonly bugs: ReadonlySet<BugName>,
    private readonly refuse: FaultHook<AppendErrorParams>,
    private readonly metrics: LogMetrics,
  ) {
    this.#partitions = store.numPartitions;
  }

  /** The handlers as grpc-js takes them. */
  implementation(): grpc.UntypedServiceImplementation {
    return {
      append: this.append,
      appendBatch: this.appendBatch,
      appendStream: this.appendStream,
      read: this.read,
      getTail: this.getTail,
    };
  }

  /**
   * One append, answered through `done` once its records are durable or it failed (a refusal
   * too, at once). With tracing on, one span per append, child of its caller's (the item's
   * traceparent, else the call's). No promise per append: a batch's items are answered from
   * the group commit's loop, and a batch of 16 would otherwise cost 16 promise chains.
   */
  #appendOne(req: w.AppendRequest, traceparent: string, done: AppendDone): void {
    if (req.records.length > limits.appendRecordsMax) {
      done(badRequest('records', `an append carries at most ${limits.appendRecordsMax} records`), 0, 0);
      return;
    }
    const answer = this.#answerer(req, traceparent, done);
    // Fault hook log.append-error: the log answers UNAVAILABLE and writes nothing, as a log
    // that lost its quorum or its disk would, while every leader stays up.
    if (this.refuse.on && (this.refuse.params.partitions?.has(req.partition) ?? true)) {
      this.refuse.hit();
      answer(
        new LogServerError('E_UNAVAILABLE', `partition ${req.partition} is unavailable: nothing was written`),
        0,
        0,
      );
      return;
    }
    try {
      this.store.enqueue(req.partition, req.records, answer);
    } catch (err) {
      answer(err instanceof Error ? err : new Error(messageOf(err)), 0, 0);
    }
  }

  /** `done`, after ending the append's span and counting a failure on a real partition. */
  #answerer(req: w.AppendRequest, traceparent: string, done: AppendDone): AppendDone {
    const { tracer, node, tracing } = this.spans;
    const span = tracing
      ? startLogSpan(
          tracer,
          spanNames.logAppend,
          node,
          { [A.partition]: req.partition, [A.logRecords]: req.records.length },
          traceparent,
        )
      : undefined;
    return (err, firstLsn, lastLsn) => {
      if (span !== undefined) endSpan(span, err, { [A.lsnFirst]: firstLsn, [A.lsn]: lastLsn });
      if (
        err !== undefined &&
        Number.isInteger(req.partition) &&
        req.partition >= 0 &&
        req.partition < this.#partitions
      )
        this.metrics.appendFailed(req.partition, statusName(err));
      done(err, firstLsn, lastLsn);
    };
  }

  readonly append = unaryHandler<w.AppendRequest, w.AppendResponse>(
    (req, md) =>
      new Promise((resolve, reject) =>
        this.#appendOne(req, traceparentFrom(md), (err, firstLsn, lastLsn) =>
          err !== undefined ? reject(err) : resolve({ firstLsn, lastLsn }),
        ),
      ),
  );

  /**
   * Each item is appended on its own (the items of one partition land in its next group
   * commits, in order) and answered on its own.
   */
  #appendItems(req: w.AppendBatchRequest, callTraceparent: string): Promise<w.AppendBatchResponse> {
    if (req.items.length > limits.appendBatchItemsMax)
      return Promise.reject(
        badRequest('items', `a batch carries at most ${limits.appendBatchItemsMax} appends`),
      );
    return new Promise((resolve) => {
      const results = new Array<w.AppendResult>(req.items.length);
      let left = req.items.length;
      if (left === 0) resolve({ results });
      req.items.forEach((item, i) =>
        this.#appendOne(
          item,
          item.traceparent !== '' ? item.traceparent : callTraceparent,
          (err, firstLsn, lastLsn) => {
            results[i] = err === undefined ? { firstLsn, lastLsn, code: 0, message: '' } : failedResult(err);
            if (--left === 0) resolve({ results });
          },
        ),
      );
    });
  }

  readonly appendBatch = unaryHandler<w.AppendBatchRequest, w.AppendBatchResponse>((req, md) =>
    this.#appendItems(req, traceparentFrom(md)),
  );

  /**
   * The same batches over one stream: each answered (with its batch_id) once its appends are
   * durable; a batch refused as a whole is answered with each item failing so, and the stream
   * goes on. The caller ending its side ends ours once every batch is answered.
   */
  readonly appendStream: grpc.handleBidiStreamingCall<w.AppendBatchRequest, w.AppendBatchResponse> = (
    call,
  ) => {
    const { signal, done } = this.streams.add(call);
    const callTraceparent = traceparentFrom(call.metadata);
    let open = 0;
    let ended = false;
    const finish = (): void => {
      if (ended && open === 0 && !signal.aborted) {
        call.end();
        done();
      }
    };
    call.on('data', (req: w.AppendBatchRequest) => {
      open++;
      const batchId = req.batchId ?? 0;
      void this.#appendItems(req, callTraceparent)
        .catch((err: unknown): w.AppendBatchResponse => {
          const failed = failedResult(err);
          return { results: req.items.map(() => failed) };
        })
        .then((res) => {
          open--;
          if (!signal.aborted) call.write({ results: res.results, batchId });
          finish();
        });
    });
    call.on('end', () => {
      ended = true;
      finish();
    });
  };

  readonly getTail = unaryHandler<w.GetTailRequest, w.GetTailResponse>((req, md) =>
    traced(
      startLogSpan(
        this.spans.tracer,
        spanNames.logGetTail,
        this.spans.node,
        { [A.partition]: req.partition },
        traceparentFrom(md),
      ),
      () => ({ tailLsn: this.store.partition(req.partition).tailLsn }),
      (res) => ({ [A.lsn]: res.tailLsn }),
    ),
  );

  readonly read: grpc.handleServerStreamingCall<w.ReadRequest, w.ReadResponse> = (call) => {
    let log: PartitionLog;
    const batchDelayMs = call.request.batchDelayMs ?? 0;
    try {
      if (batchDelayMs > limits.readBatchDelayMsMax)
        throw badRequest('batchDelayMs', `at most ${limits.readBatchDelayMsMax} ms`);
      log = this.store.partition(call.request.partition);
    } catch (err) {
      call.emit('error', toServiceError(err));
      return;
    }
    new TailRead(call, log, this.streams, this.spans, batchDelayMs, this.bugs).run();
  };
}

/**
 * One Read stream: entries from `fromLsn` on, in batches, then each new one as the tail moves,
 * until the caller goes away or the log closes. One span for the stream's life (open while
 * the processor tails: the ledger shows it if the log dies).
 */
class TailRead {
  readonly #signal: AbortSignal;
  readonly #done: () => void;
  readonly #span: ReturnType<typeof startLogSpan>;
  #sent = 0;
  #next: number;
  /**
   * The loop's waits (the tail moving, the batch delay, the transport taking a message) end
   * early when the stream goes away: one abort listener for the stream's life, which ends
   * whichever wait is under way, instead of one added and removed per wait.
   */
  #stopWaiting: (() => void) | undefined;

  constructor(
    private readonly call: grpc.ServerWritableStream<w.ReadRequest, w.ReadResponse>,
    private readonly log: PartitionLog,
    streams: StreamRegistry,
    spans: SpanContext,
    private readonly batchDelayMs: number,
    bugs: ReadonlySet<BugName>,
  ) {
    ({ signal: this.#signal, done: this.#done } = streams.add(call));
    this.#span = startLogSpan(
      spans.tracer,
      spanNames.logRead,
      spans.node,
      { [A.partition]: call.request.partition, [A.logFromLsn]: call.request.fromLsn },
      traceparentFrom(call.metadata),
    );
    this.#next = Math.max(1, call.request.fromLsn);
    // Bug switch: a read resuming from an LSN starts one entry too late.
    if (bugs.has('read-skips-after-reconnect') && this.#next > 1) this.#next++;
    this.#signal.addEventListener('abort', () => this.#stopWaiting?.(), { once: true });
  }

  run(): void {
    this.#loop().then(
      () => this.#ended(),
      (err: unknown) => this.#ended({ err }),
    );
  }

  async #loop(): Promise<void> {
    const log = this.log;
    while (!this.#signal.aborted && !log.isClosed) {
      const entries = log.readInMemory(this.#next, READ_BATCH) ?? (await log.read(this.#next, READ_BATCH));
      const last = entries[entries.length - 1];
      if (!last) {
        await this.#waitForMore();
        continue;
      }
      this.#next = last.lsn + 1;
      this.#sent += entries.length;
      await this.#until((resume) => void this.call.write({ entries }, resume));
    }
  }

  /** Caught up: until the tail moves past what was sent, then (if asked) the batch delay. */
  async #waitForMore(): Promise<void> {
    const past = this.#next - 1;
    await this.#until((resume) => void this.log.tailPast(past).then(resume));
    // Caught up and asked to wait: what is appended in the next few ms goes along.
    if (this.batchDelayMs > 0)
      await this.#until((resume) => {
        const timer = setTimeout(resume, this.batchDelayMs);
        return () => clearTimeout(timer);
      });
  }

  /** Resolves when `start` resumes it or the stream goes away (then its cleanup runs). */
  #until(start: (resume: () => void) => (() => void) | void): Promise<void> {
    return new Promise((resolve) => {
      if (this.#signal.aborted) return resolve();
      let cleanup: (() => void) | void = undefined;
      const resume = (): void => {
        if (this.#stopWaiting === resume) this.#stopWaiting = undefined;
        cleanup?.();
        resolve();
      };
      this.#stopWaiting = resume;
      cleanup = start(resume);
    });
  }

  /** The stream's end: an error to a caller still there (the log stopping, else why), the span ended. */
  #ended(failure?: { err: unknown }): void {
    if (!this.#signal.aborted)
      this.call.emit(
        'error',
        toServiceError(
          failure !== undefined ? failure.err : new LogServerError('E_STOPPED', 'log server is stopping'),
        ),
      );
    this.#span.setAttributes({ [A.logEntries]: this.#sent, [A.lsn]: this.#next - 1 });
    if (failure !== undefined) this.#span.setStatus({ code: 2, message: messageOf(failure.err) });
    this.#span.end();
    this.#done();
  }
}

/** An append's failure as a batch result: its gRPC status and details. */
function failedResult(err: unknown): w.AppendResult {
  const e = toServiceError(err);
  return { firstLsn: 0, lastLsn: 0, code: e.code, message: e.details };
}

/** An error's gRPC status as a metric label: `unavailable`, `internal`, … */
function statusName(err: Error): string {
  return grpc.status[toServiceError(err).code].toLowerCase();
}
