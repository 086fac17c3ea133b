// The log server process: the partition logs, the metadata store and the controller behind
// one gRPC server (services Log and Controller), plus /metrics.
//
//   gRPC Log.Append/Read/GetTail ─▶ LogHandlers ─▶ LogStore ─▶ PartitionLog (file per partition)
//   gRPC Controller.* ─▶ ControllerHandlers ─▶ Controller ─▶ MetadataStore (metadata.json, CAS)
//   GET /metrics ─▶ own prom-client registry
import type { Registry } from 'prom-client';
import { bindServer, grpc, serverOptions, serviceDefinitions } from '../../transport/grpc.js';
import { noBugs, type BugName } from '../bugs.js';
import type { Logger } from '../../telemetry/logger.js';
import { silentLogger } from '../../telemetry/logger.js';
import { createRegistry, startMetricsServer, type StartedMetricsServer } from '../../telemetry/metrics.js';
import type { StartedService } from '../service.js';
import { Controller } from './controller.js';
import { LogServerError, toServiceError } from './errors.js';
import { StreamRegistry } from './grpc-handlers.js';
import { LogHandlers, type AppendErrorParams } from './log-handlers.js';
import { ControllerHandlers, type TableUpdateParams } from './controller-handlers.js';
import { createLogMetrics } from './log-metrics.js';
import { LogStore } from './log-store.js';
import { lockDataDir } from './data-dir-lock.js';
import { ensureDir } from './ensure-dir.js';
import { MetadataStore } from './metadata-store.js';
import { createTracing, type Tracing } from '../../telemetry/tracing.js';
import { spanAttributes as A, spanNames } from '../../protocol/names.js';
import { startLogSpan } from './log-spans.js';
import {
  createFaultHooks,
  enumParam,
  numberParam,
  partitionsParam,
  type FaultHook,
  type FaultHooks,
} from '../fault-hooks.js';
import type { SlowSyncParams, WriteErrorParams } from './partition-log.js';

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

export interface LogHooks {
  appendError: FaultHook<AppendErrorParams>;
  slowSync: FaultHook<SlowSyncParams>;
  writeError: FaultHook<WriteErrorParams>;
  tableUpdates: FaultHook<TableUpdateParams>;
}

/** The log server's fault hooks (fault-hooks.ts): errors, a slow or failing disk, a controller's late tables. */
export function defineLogHooks(hooks: FaultHooks): LogHooks {
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
    writeError: hooks.define('log.write-error', {
      parse: (raw) => ({
        written: enumParam(raw, 'written', ['none', 'torn', 'all'] as const),
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
      writeError: hooks.writeError,
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
    new LogHandlers(
      store,
      streams,
      spans,
      options.bugs ?? noBugs,
      hooks.appendError,
      metrics,
    ).implementation(),
  );
  server.addService(
    serviceDefinitions.controller,
    new ControllerHandlers(controller, streams, spans, hooks.tableUpdates, metrics).implementation(),
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
