// The gRPC Controller service of the log server: heartbeats, the partition table (read and
// watched), leadership compare-and-swap and transfers. Each handler is a method over the
// controller, the stream registry and the tracer; a table watch is an object of its own.
//
//   WatchPartitionTable ─▶ TableWatch: controller.watch ─▶ update (fault hook: delay, drop,
//                          reorder) ─▶ offer ─▶ outbox ─▶ pump (one message at a time)
//                          └─ catch-up timer: the current table again if one was missed
import { type grpc } from '../../transport/grpc.js';
import { limits } from '../../protocol/limits.js';
import { spanAttributes as A, spanNames } from '../../protocol/names.js';
import type * as w from '../../protocol/wire.js';
import type { FaultHook } from '../fault-hooks.js';
import type { Controller } from './controller.js';
import { badRequest, checkChars, toServiceError } from './errors.js';
import { StreamRegistry, unaryHandler, writeMessage } from './grpc-handlers.js';
import type { SpanContext } from './log-handlers.js';
import type { LogMetrics } from './log-metrics.js';
import { startLogSpan, traceparentFrom, traced } from './log-spans.js';

/** The controller.table-updates fault hook: table updates to watchers held back. */
export interface TableUpdateParams {
  how: 'delay' | 'drop' | 'reorder';
  /** delay: how late each update goes; reorder: how long an update waits for a newer one to overtake it. */
  delayMs: number;
  /** Only watchers whose name starts with this (default: every watcher). */
  watcher: string;
}

/** How often a table watcher that missed an update is offered the current table. */
const TABLE_CATCH_UP_MS = 500;

export class ControllerHandlers {
  constructor(
    private readonly controller: Controller,
    private readonly streams: StreamRegistry,
    private readonly spans: SpanContext,
    private readonly held: FaultHook<TableUpdateParams>,
    private readonly metrics: LogMetrics,
  ) {}

  /** The handlers as grpc-js takes them. */
  implementation(): grpc.UntypedServiceImplementation {
    return {
      heartbeat: this.heartbeat,
      getPartitionTable: this.getPartitionTable,
      compareAndSwapLeader: this.compareAndSwapLeader,
      transferLeadership: this.transferLeadership,
      watchPartitionTable: this.watchPartitionTable,
    };
  }

  readonly heartbeat = unaryHandler<w.HeartbeatRequest, w.HeartbeatResponse>((req) => {
    checkChars('address', req.address, limits.addressCharsMax);
    if (req.partitions.length > limits.heartbeatPartitionsMax)
      throw badRequest('partitions', `a heartbeat lists at most ${limits.heartbeatPartitionsMax} partitions`);
    return this.controller.heartbeat(req);
  });

  readonly getPartitionTable = unaryHandler<w.GetPartitionTableRequest, w.PartitionTable>(() =>
    this.controller.currentTable(),
  );

  readonly compareAndSwapLeader = unaryHandler<w.CompareAndSwapLeaderRequest, w.CompareAndSwapLeaderResponse>(
    (req, md) => {
      checkChars('leaderNode', req.leaderNode, limits.nodeNameCharsMax);
      return traced(
        startLogSpan(
          this.spans.tracer,
          spanNames.logFenceCasLeader,
          this.spans.node,
          {
            [A.partition]: req.partition,
            [A.fenceNode]: req.leaderNode,
            [A.fenceExpectedEpoch]: req.expectedEpoch,
          },
          traceparentFrom(md),
        ),
        () => this.controller.compareAndSwapLeader(req),
        (res) => ({
          [A.fenceOk]: res.ok,
          [A.leaderEpoch]: res.epoch,
          [A.fenceLeader]: res.leaderNode,
        }),
      );
    },
  );

  readonly transferLeadership = unaryHandler<w.TransferLeadershipRequest, w.TransferLeadershipResponse>(
    (req, md) => {
      checkChars('node', req.node, limits.nodeNameCharsMax);
      return traced(
        startLogSpan(
          this.spans.tracer,
          spanNames.logFenceTransfer,
          this.spans.node,
          { [A.partition]: req.partition, [A.fenceNode]: req.node },
          traceparentFrom(md),
        ),
        async () => ({ assignment: await this.controller.transferLeadership(req.partition, req.node) }),
        (res) => ({ [A.leaderEpoch]: res.assignment.epoch, [A.fenceLeader]: res.assignment.leaderNode }),
      );
    },
  );

  readonly watchPartitionTable: grpc.handleServerStreamingCall<
    w.WatchPartitionTableRequest,
    w.PartitionTable
  > = (call) => {
    if (call.request.watcher.length > limits.nodeNameCharsMax) {
      call.emit(
        'error',
        toServiceError(badRequest('watcher', `watcher is longer than ${limits.nodeNameCharsMax} characters`)),
      );
      return;
    }
    new TableWatch(call, this.controller, this.streams, this.held, this.metrics).run();
  };
}

/**
 * One watcher's stream of partition tables. Only the newest table matters: a slow watcher
 * gets the latest one when it can take it. The outbox holds more than one only when the
 * table-updates fault hook reorders them.
 */
class TableWatch {
  readonly #signal: AbortSignal;
  readonly #done: () => void;
  readonly #watcher: string;
  #outbox: w.PartitionTable[] = [];
  #writing = false;
  /** The newest version handed to this watcher's stream (for the catch-up). */
  #offered = -Infinity;
  /** Fault hook timers under way (a delayed or held-back update). */
  readonly #timers = new Set<NodeJS.Timeout>();
  /** An update held back until a newer one has gone first (the hook's reorder). */
  #heldBack: w.PartitionTable | undefined;

  constructor(
    private readonly call: grpc.ServerWritableStream<w.WatchPartitionTableRequest, w.PartitionTable>,
    private readonly controller: Controller,
    streams: StreamRegistry,
    private readonly held: FaultHook<TableUpdateParams>,
    private readonly metrics: LogMetrics,
  ) {
    ({ signal: this.#signal, done: this.#done } = streams.add(call));
    this.#watcher = call.request.watcher;
  }

  run(): void {
    const unsubscribe = this.controller.watch((t) => this.#update(t));
    // Catch-up: a watcher that missed an update (one lost on its way out) is offered the
    // current table again, so an ingress never routes by a stale table until the next change —
    // a leader that died meanwhile would keep its requests waiting that long.
    const catchUp = setInterval(() => {
      const t = this.controller.currentTable();
      if (t.version > this.#offered && this.#heldBack === undefined && this.#timers.size === 0)
        this.#update(t);
    }, TABLE_CATCH_UP_MS);
    this.#signal.addEventListener('abort', () => {
      clearInterval(catchUp);
      for (const timer of this.#timers) clearTimeout(timer);
      unsubscribe();
      this.#done();
    });
  }

  async #pump(): Promise<void> {
    if (this.#writing) return;
    this.#writing = true;
    for (let t = this.#outbox.shift(); t !== undefined && !this.#signal.aborted; t = this.#outbox.shift())
      await writeMessage(this.call, t, this.#signal);
    this.#writing = false;
  }

  #offer(...tables: w.PartitionTable[]): void {
    for (const t of tables) this.#offered = Math.max(this.#offered, t.version);
    this.#outbox = tables.length === 1 ? tables : [...this.#outbox, ...tables];
    void this.#pump();
  }

  #later(ms: number, then: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      then();
    }, ms);
    this.#timers.add(timer);
  }

  /**
   * A new table for this watcher. Fault hook controller.table-updates: its updates delayed,
   * dropped, or held back until a newer one has gone first (then sent after it).
   */
  #update(t: w.PartitionTable): void {
    const held = this.held;
    if (!held.on || !this.#watcher.startsWith(held.params.watcher)) {
      if (this.#heldBack !== undefined) {
        // Healed with an update still held: it goes after this newer one, as reordered.
        const older = this.#heldBack;
        this.#heldBack = undefined;
        this.#offer(t, older);
      } else this.#offer(t);
      return;
    }
    const { how, delayMs } = held.params;
    held.hit();
    this.metrics.tableUpdateHeld(how);
    if (how === 'drop') return;
    if (how === 'delay') return this.#later(delayMs, () => this.#offer(t));
    if (this.#heldBack === undefined) {
      this.#heldBack = t;
      this.#later(delayMs, () => {
        if (this.#heldBack === t) {
          this.#heldBack = undefined;
          this.#offer(t);
        }
      });
      return;
    }
    const older = this.#heldBack;
    this.#heldBack = undefined;
    this.#offer(t, older);
  }
}
