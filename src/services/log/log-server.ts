// The log server process: the partition logs, the metadata store and the controller behind
// one gRPC server (services Log and Controller), plus /metrics.
//
//   gRPC Log.Append/Read/GetTail ─────────▶ LogStore ─▶ PartitionLog (file per partition)
//   gRPC Controller.* ─▶ Controller ─▶ MetadataStore (metadata.json, CAS)
//   GET /metrics ─▶ own prom-client registry
import type { Registry } from 'prom-client';
import { bindServer, grpc, serverOptions, serviceDefinitions } from '../../protocol/grpc.js';
import { limits } from '../../protocol/limits.js';
import { messageOf } from '../../util/errors.js';
import type * as w from '../../protocol/wire.js';
import { noBugs, type BugName } from '../bugs.js';
import type { Logger } from '../../telemetry/logger.js';
import { silentLogger } from '../../telemetry/logger.js';
import { createRegistry, startMetricsServer, type StartedMetricsServer } from '../../telemetry/metrics.js';
import type { StartedService } from '../service.js';
import { Controller } from './controller.js';
import { LogServerError, toServiceError } from './errors.js';
import { StreamRegistry, unaryHandler, writeMessage } from './grpc-handlers.js';
import { createLogMetrics, type LogMetrics } from './log-metrics.js';
import { LogStore } from './log-store.js';
import { lockDataDir } from './data-dir-lock.js';
import { ensureDir } from './ensure-dir.js';
import { MetadataStore } from './metadata-store.js';
import { createTracing, type Tracing } from '../../telemetry/tracing.js';
import { spanAttributes as A, spanNames } from '../../protocol/names.js';
import { endSpan, startLogSpan, traceparentFrom, traced } from './log-spans.js';
import type { Tracer } from '@opentelemetry/api';
import {
  createFaultHooks,
  enumParam,
  numberParam,
  partitionsParam,
  type FaultHook,
  type FaultHooks,
} from '../fault-hooks.js';
import type { SlowSyncParams } from './partition-log.js';

export interface LogServerOptions {
  dataDir: string;
  node?: string;
  host?: string;
  /** gRPC port; 0 picks a free one. */
  port?: number;
  metricsPort?: number;
  partitions?: number;
  failureTimeoutMs?: number;
  maxRecordBytes?: number;
  /** See ControllerOptions.startupSettleMs. */
  startupSettleMs?: number;
  /** See ControllerOptions.expectNodes. */
  expectNodes?: number;
  /** Bug switches (src/services/bugs.ts); none by default. */
  bugs?: ReadonlySet<BugName>;
  logger?: Logger;
  registry?: Registry;
  /** Its tracer (default: from OTEL_* in `env`, as every service). */
  tracing?: Tracing;
  env?: NodeJS.ProcessEnv;
}

export interface StartedLogServer extends StartedService {
  readonly store: LogStore;
  readonly controller: Controller;
  readonly registry: Registry;
}

/** The log.append-error fault hook: appends to these partitions refused, nothing written. */
interface AppendErrorParams {
  partitions: ReadonlySet<number> | undefined;
}

/** The controller.table-updates fault hook: table updates to watchers held back. */
interface TableUpdateParams {
  how: 'delay' | 'drop' | 'reorder';
  /** delay: how late each update goes; reorder: how long an update waits for a newer one to overtake it. */
  delayMs: number;
  /** Only watchers whose name starts with this (default: every watcher). */
  watcher: string;
}

interface LogHooks {
  appendError: FaultHook<AppendErrorParams>;
  slowSync: FaultHook<SlowSyncParams>;
  tableUpdates: FaultHook<TableUpdateParams>;
}

/** The log server's fault hooks (fault-hooks.ts): errors, a slow disk, a controller's late tables. */
function defineLogHooks(hooks: FaultHooks): LogHooks {
  return {
    appendError: hooks.define('log.append-error', {
      parse: (raw) => ({ partitions: partitionsParam(raw) }),
    }),
    slowSync: hooks.define('log.slow-fsync', {
      parse: (raw) => ({
        delayMs: numberParam(raw, 'delayMs', { min: 1, max: 10_000 }),
        partitions: partitionsParam(raw),
      }),
    }),
    tableUpdates: hooks.define('controller.table-updates', {
      parse: (raw) => ({
        how: enumParam(raw, 'how', ['delay', 'drop', 'reorder'] as const),
        delayMs: numberParam(raw, 'delayMs', { min: 1, max: 60_000, default: 1000 }),
        watcher: typeof raw['watcher'] === 'string' ? raw['watcher'] : '',
      }),
    }),
  };
}

export const logServerDefaults = {
  host: '127.0.0.1',
  partitions: 4,
  failureTimeoutMs: 700,
  maxRecordBytes: 1024 * 1024,
  startupSettleMs: 300,
} as const;

/** How often a table watcher that missed an update is offered the current table. */
const TABLE_CATCH_UP_MS = 500;

/** Entries per Read batch and bytes per batch (a single larger record still goes alone). */
const READ_BATCH = { maxEntries: 1000, maxBytes: 1024 * 1024 };

export async function startLogServer(options: LogServerOptions): Promise<StartedLogServer> {
  const node = options.node ?? 'log';
  const host = options.host ?? logServerDefaults.host;
  const numPartitions = options.partitions ?? logServerDefaults.partitions;
  const failureTimeoutMs = options.failureTimeoutMs ?? logServerDefaults.failureTimeoutMs;
  const logger = options.logger ?? silentLogger;
  const registry = options.registry ?? createRegistry({ service: node });
  const metrics = createLogMetrics(registry);
  const tracing = options.tracing ?? createTracing(node, logger, options.env);
  const faultHooks = createFaultHooks(registry);
  const hooks = defineLogHooks(faultHooks);

  await ensureDir(options.dataDir);
  const lock = await lockDataDir(options.dataDir);
  let store: LogStore;
  let metadata: MetadataStore;
  try {
    store = await LogStore.open({
      dataDir: options.dataDir,
      numPartitions,
      maxRecordBytes: options.maxRecordBytes ?? logServerDefaults.maxRecordBytes,
      logger: logger.child('store'),
      hooks: (p) => metrics.partitionHooks(p),
      slowSync: hooks.slowSync,
    });
  } catch (err) {
    await lock.release();
    throw err;
  }
  try {
    metadata = await MetadataStore.open(options.dataDir, numPartitions);
  } catch (err) {
    await store.close();
    await lock.release();
    throw err;
  }
  const controller = new Controller({
    numPartitions,
    failureTimeoutMs,
    metadata,
    logger: logger.child('controller'),
    startupSettleMs: options.startupSettleMs ?? logServerDefaults.startupSettleMs,
    expectNodes: options.expectNodes ?? 0,
    bugs: options.bugs ?? noBugs,
    onLeaderChange: (p, reason, change) => {
      metrics.leaderChanged(p, reason);
      if (change !== undefined)
        startLogSpan(tracing.tracer, spanNames.logFenceEpoch, node, {
          [A.partition]: p,
          [A.leaderEpoch]: change.epoch,
          [A.fenceFrom]: change.from,
          [A.fenceLeader]: change.to,
          [A.fenceReason]: reason,
        }).end();
    },
    onTable: (t) => {
      metrics.liveNodes(t.nodes.filter((n) => n.alive).length);
      metrics.tableVersion(t.version);
    },
  });

  const streams = new StreamRegistry();
  const server = new grpc.Server(serverOptions);
  const spans = { tracer: tracing.tracer, node, tracing: tracing.enabled };
  server.addService(
    serviceDefinitions.log,
    logHandlers(store, streams, spans, options.bugs ?? noBugs, hooks.appendError, metrics),
  );
  server.addService(
    serviceDefinitions.controller,
    controllerHandlers(controller, streams, spans, hooks.tableUpdates, metrics),
  );

  let port: number;
  let metricsServer: StartedMetricsServer;
  try {
    port = await bindServer(server, host, options.port ?? 0);
    metricsServer = await startMetricsServer(registry, host, options.metricsPort ?? 0, [faultHooks.route]);
  } catch (err) {
    server.forceShutdown();
    await store.close();
    await lock.release();
    throw err;
  }
  controller.start();
  const grpcAddress = `${host}:${port}`;
  logger.info('log server serving', {
    grpc: grpcAddress,
    metrics: metricsServer.url,
    dataDir: options.dataDir,
    partitions: numPartitions,
    tails: Array.from({ length: numPartitions }, (_, p) => store.partition(p).tailLsn),
  });

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await controller.stop();
      streams.closeAll(toServiceError(new LogServerError('E_STOPPED', 'log server is stopping')));
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000);
        server.tryShutdown(() => {
          clearTimeout(t);
          resolve();
        });
      });
      await store.close();
      await metadata.drain();
      await lock.release();
      await metricsServer.stop();
      faultHooks.offAll();
      await tracing.shutdown();
    })());
  return {
    role: 'log',
    node,
    addresses: { grpc: grpcAddress, metrics: metricsServer.url },
    store,
    controller,
    registry,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

interface SpanContext {
  tracer: Tracer;
  node: string;
  /** Whether spans are recorded at all (else the per-append ones are not even started). */
  tracing: boolean;
}

/** An append's failure as a batch result: its gRPC status and details. */
function failedResult(err: unknown): w.AppendResult {
  const e = toServiceError(err);
  return { firstLsn: 0, lastLsn: 0, code: e.code ?? grpc.status.INTERNAL, message: e.details ?? e.message };
}

function logHandlers(
  store: LogStore,
  streams: StreamRegistry,
  { tracer, node, tracing }: SpanContext,
  bugs: ReadonlySet<BugName>,
  refuse: FaultHook<AppendErrorParams>,
  metrics: LogMetrics,
): grpc.UntypedServiceImplementation {
  const partitions = store.numPartitions;
  // One append, answered through `done` once its records are durable or it failed (a refusal
  // too, at once). With tracing on, one span per append, child of its caller's (the item's
  // traceparent, else the call's). No promise per append: a batch's items are answered from
  // the group commit's loop, and a batch of 16 would otherwise cost 16 promise chains.
  const appendOne = (
    req: w.AppendRequest,
    traceparent: string,
    done: (err: Error | undefined, firstLsn: number, lastLsn: number) => void,
  ): void => {
    if (req.records.length > limits.appendRecordsMax) {
      done(badRequest('records', `an append carries at most ${limits.appendRecordsMax} records`), 0, 0);
      return;
    }
    const span = tracing
      ? startLogSpan(
          tracer,
          spanNames.logAppend,
          node,
          { [A.partition]: req.partition, [A.logRecords]: req.records.length },
          traceparent,
        )
      : undefined;
    const answer = (err: Error | undefined, firstLsn: number, lastLsn: number): void => {
      if (span !== undefined) endSpan(span, err, { [A.lsnFirst]: firstLsn, [A.lsn]: lastLsn });
      if (
        err !== undefined &&
        Number.isInteger(req.partition) &&
        req.partition >= 0 &&
        req.partition < partitions
      )
        metrics.appendFailed(req.partition, statusName(err));
      done(err, firstLsn, lastLsn);
    };
    // Fault hook log.append-error: the log answers UNAVAILABLE and writes nothing, as a log
    // that lost its quorum or its disk would, while every leader stays up.
    if (refuse.on && (refuse.params.partitions?.has(req.partition) ?? true)) {
      refuse.hit();
      answer(
        new LogServerError('E_UNAVAILABLE', `partition ${req.partition} is unavailable: nothing was written`),
        0,
        0,
      );
      return;
    }
    try {
      store.enqueue(req.partition, req.records, answer);
    } catch (err) {
      answer(err instanceof Error ? err : new Error(messageOf(err)), 0, 0);
    }
  };
  const append = unaryHandler<w.AppendRequest, w.AppendResponse>(
    (req, md) =>
      new Promise((resolve, reject) =>
        appendOne(req, traceparentFrom(md), (err, firstLsn, lastLsn) =>
          err !== undefined ? reject(err) : resolve({ firstLsn, lastLsn }),
        ),
      ),
  );
  // Each item is appended on its own (the items of one partition land in its next group
  // commits, in order) and answered on its own.
  const appendItems = (
    req: w.AppendBatchRequest,
    callTraceparent: string,
  ): Promise<w.AppendBatchResponse> => {
    if (req.items.length > limits.appendBatchItemsMax)
      return Promise.reject(
        badRequest('items', `a batch carries at most ${limits.appendBatchItemsMax} appends`),
      );
    return new Promise((resolve) => {
      const results = new Array<w.AppendResult>(req.items.length);
      let left = req.items.length;
      if (left === 0) resolve({ results });
      req.items.forEach((item, i) =>
        appendOne(
          item,
          item.traceparent !== '' ? item.traceparent : callTraceparent,
          (err, firstLsn, lastLsn) => {
            results[i] = err === undefined ? { firstLsn, lastLsn, code: 0, message: '' } : failedResult(err);
            if (--left === 0) resolve({ results });
          },
        ),
      );
    });
  };
  const appendBatch = unaryHandler<w.AppendBatchRequest, w.AppendBatchResponse>((req, md) =>
    appendItems(req, traceparentFrom(md)),
  );
  // The same batches over one stream: each answered (with its batch_id) once its appends are
  // durable; a batch refused as a whole is answered with each item failing so, and the stream
  // goes on. The caller ending its side ends ours once every batch is answered.
  const appendStream: grpc.handleBidiStreamingCall<w.AppendBatchRequest, w.AppendBatchResponse> = (call) => {
    const { signal, done } = streams.add(call);
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
      void appendItems(req, callTraceparent)
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
  const getTail = unaryHandler<w.GetTailRequest, w.GetTailResponse>((req, md) =>
    traced(
      startLogSpan(tracer, spanNames.logGetTail, node, { [A.partition]: req.partition }, traceparentFrom(md)),
      () => ({ tailLsn: store.partition(req.partition).tailLsn }),
      (res) => ({ [A.lsn]: res.tailLsn }),
    ),
  );
  const read: grpc.handleServerStreamingCall<w.ReadRequest, w.ReadResponse> = (call) => {
    let log;
    const batchDelayMs = call.request.batchDelayMs ?? 0;
    try {
      if (batchDelayMs > limits.readBatchDelayMsMax)
        throw badRequest('batchDelayMs', `at most ${limits.readBatchDelayMsMax} ms`);
      log = store.partition(call.request.partition);
    } catch (err) {
      call.emit('error', toServiceError(err));
      return;
    }
    const { signal, done } = streams.add(call);
    const partitionLog = log;
    // One span per tail stream: open while the processor tails (the ledger shows it if the log dies).
    const span = startLogSpan(
      tracer,
      spanNames.logRead,
      node,
      { [A.partition]: call.request.partition, [A.logFromLsn]: call.request.fromLsn },
      traceparentFrom(call.metadata),
    );
    let sent = 0;
    let next = Math.max(1, call.request.fromLsn);
    // Bug switch: a read resuming from an LSN starts one entry too late.
    if (bugs.has('read-skips-after-reconnect') && next > 1) next++;
    // The loop's waits (the tail moving, the batch delay, the transport taking a message) end
    // early when the stream goes away: one abort listener for the stream's life, which ends
    // whichever wait is under way, instead of one added and removed per wait.
    let stopWaiting: (() => void) | undefined;
    signal.addEventListener('abort', () => stopWaiting?.(), { once: true });
    const until = (start: (resume: () => void) => (() => void) | void): Promise<void> =>
      new Promise((resolve) => {
        if (signal.aborted) return resolve();
        let cleanup: (() => void) | void = undefined;
        const resume = (): void => {
          if (stopWaiting === resume) stopWaiting = undefined;
          cleanup?.();
          resolve();
        };
        stopWaiting = resume;
        cleanup = start(resume);
      });
    void (async () => {
      while (!signal.aborted && !partitionLog.isClosed) {
        const entries =
          partitionLog.readInMemory(next, READ_BATCH) ?? (await partitionLog.read(next, READ_BATCH));
        const last = entries[entries.length - 1];
        if (!last) {
          const past = next - 1;
          await until((resume) => void partitionLog.tailPast(past).then(resume));
          // Caught up and asked to wait: what is appended in the next few ms goes along.
          if (batchDelayMs > 0)
            await until((resume) => {
              const timer = setTimeout(resume, batchDelayMs);
              return () => clearTimeout(timer);
            });
          continue;
        }
        next = last.lsn + 1;
        sent += entries.length;
        await until((resume) => void call.write({ entries }, resume));
      }
    })().then(
      () => {
        if (!signal.aborted)
          call.emit('error', toServiceError(new LogServerError('E_STOPPED', 'log server is stopping')));
        span.setAttributes({ [A.logEntries]: sent, [A.lsn]: next - 1 }).end();
        done();
      },
      (err: unknown) => {
        if (!signal.aborted) call.emit('error', toServiceError(err));
        span
          .setAttributes({ [A.logEntries]: sent, [A.lsn]: next - 1 })
          .setStatus({ code: 2, message: err instanceof Error ? err.message : String(err) })
          .end();
        done();
      },
    );
  };
  return { append, appendBatch, appendStream, read, getTail };
}

function controllerHandlers(
  controller: Controller,
  streams: StreamRegistry,
  { tracer, node }: SpanContext,
  held: FaultHook<TableUpdateParams>,
  metrics: LogMetrics,
): grpc.UntypedServiceImplementation {
  const heartbeat = unaryHandler<w.HeartbeatRequest, w.HeartbeatResponse>((req) => {
    checkChars('address', req.address, limits.addressCharsMax);
    if (req.partitions.length > limits.heartbeatPartitionsMax)
      throw badRequest('partitions', `a heartbeat lists at most ${limits.heartbeatPartitionsMax} partitions`);
    return controller.heartbeat(req);
  });
  const getPartitionTable = unaryHandler<w.GetPartitionTableRequest, w.PartitionTable>(() =>
    controller.currentTable(),
  );
  const compareAndSwapLeader = unaryHandler<w.CompareAndSwapLeaderRequest, w.CompareAndSwapLeaderResponse>(
    (req, md) => {
      checkChars('leaderNode', req.leaderNode, limits.nodeNameCharsMax);
      return traced(
        startLogSpan(
          tracer,
          spanNames.logFenceCasLeader,
          node,
          {
            [A.partition]: req.partition,
            [A.fenceNode]: req.leaderNode,
            [A.fenceExpectedEpoch]: req.expectedEpoch,
          },
          traceparentFrom(md),
        ),
        () => controller.compareAndSwapLeader(req),
        (res) => ({
          [A.fenceOk]: res.ok,
          [A.leaderEpoch]: res.epoch,
          [A.fenceLeader]: res.leaderNode,
        }),
      );
    },
  );
  const transferLeadership = unaryHandler<w.TransferLeadershipRequest, w.TransferLeadershipResponse>(
    (req, md) => {
      checkChars('node', req.node, limits.nodeNameCharsMax);
      return traced(
        startLogSpan(
          tracer,
          spanNames.logFenceTransfer,
          node,
          { [A.partition]: req.partition, [A.fenceNode]: req.node },
          traceparentFrom(md),
        ),
        async () => ({ assignment: await controller.transferLeadership(req.partition, req.node) }),
        (res) => ({ [A.leaderEpoch]: res.assignment.epoch, [A.fenceLeader]: res.assignment.leaderNode }),
      );
    },
  );
  const watchPartitionTable: grpc.handleServerStreamingCall<
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
    const { signal, done } = streams.add(call);
    const watcher = call.request.watcher;
    // Only the newest table matters: a slow watcher gets the latest one when it can take it.
    // The outbox holds more than one only when the table-updates fault hook reorders them.
    let outbox: w.PartitionTable[] = [];
    let writing = false;
    const pump = async (): Promise<void> => {
      if (writing) return;
      writing = true;
      for (let t = outbox.shift(); t !== undefined && !signal.aborted; t = outbox.shift())
        await writeMessage(call, t, signal);
      writing = false;
    };
    /** The newest version handed to this watcher's stream (for the catch-up below). */
    let offered = -Infinity;
    const offer = (...tables: w.PartitionTable[]): void => {
      for (const t of tables) offered = Math.max(offered, t.version);
      outbox = tables.length === 1 ? tables : [...outbox, ...tables];
      void pump();
    };
    // Fault hook controller.table-updates: this watcher's updates delayed, dropped, or held
    // back until a newer one has gone first (then sent after it).
    const timers = new Set<NodeJS.Timeout>();
    let heldBack: w.PartitionTable | undefined;
    const later = (ms: number, then: () => void): void => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        then();
      }, ms);
      timers.add(timer);
    };
    const update = (t: w.PartitionTable): void => {
      if (!held.on || !watcher.startsWith(held.params.watcher)) {
        if (heldBack !== undefined) {
          // Healed with an update still held: it goes after this newer one, as reordered.
          const older = heldBack;
          heldBack = undefined;
          offer(t, older);
        } else offer(t);
        return;
      }
      const { how, delayMs } = held.params;
      held.hit();
      metrics.tableUpdateHeld(how);
      if (how === 'drop') return;
      if (how === 'delay') return later(delayMs, () => offer(t));
      if (heldBack === undefined) {
        heldBack = t;
        later(delayMs, () => {
          if (heldBack === t) {
            heldBack = undefined;
            offer(t);
          }
        });
        return;
      }
      const older = heldBack;
      heldBack = undefined;
      offer(t, older);
    };
    const unsubscribe = controller.watch(update);
    // Catch-up: a watcher that missed an update (one lost on its way out) is offered the
    // current table again, so an ingress never routes by a stale table until the next change —
    // a leader that died meanwhile would keep its requests waiting that long.
    const catchUp = setInterval(() => {
      const t = controller.currentTable();
      if (t.version > offered && heldBack === undefined && timers.size === 0) update(t);
    }, TABLE_CATCH_UP_MS);
    signal.addEventListener('abort', () => {
      clearInterval(catchUp);
      for (const timer of timers) clearTimeout(timer);
      unsubscribe();
      done();
    });
  };
  return { heartbeat, getPartitionTable, compareAndSwapLeader, transferLeadership, watchPartitionTable };
}

/** An error's gRPC status as a metric label: `unavailable`, `internal`, … */
function statusName(err: Error): string {
  const code = toServiceError(err).code ?? grpc.status.UNKNOWN;
  return (grpc.status[code] ?? 'unknown').toLowerCase();
}

function badRequest(field: string, message: string): LogServerError {
  return new LogServerError('E_BAD_REQUEST', `${field}: ${message}`);
}

function checkChars(field: string, value: string, max: number): void {
  if (value.length > max) throw badRequest(field, `longer than ${max} characters`);
}
