// The ingress: the HTTP/1.1 API clients call, in front of the partition processors.
//
//   POST /{service}/{handler}[/send]         POST /{service}/{key}/{handler}[/send]
//   GET  /invocations/{id}/output            GET  /invocations/{id}/attach
//        │ parse, limits, idempotency-key ─▶ invocation id (encodes the partition key)
//        ▼
//   Dispatcher (fixed: request/response with resends) | LegacyDispatcher (append + wait for push)
//
// Every request is counted as pending from arrival until its answer, so a client left
// hanging shows up in limbo_ingress_pending_requests and limbo_ingress_oldest_pending_seconds.
//
// This file assembles the ingress (router, dispatchers, metrics, HTTP server); the request
// handling is in http-api.ts, the table of requests in flight in pending-table.ts, the
// errors answered in errors.ts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { createLogClient, type LogClient } from '../../transport/grpc.js';
import { limits } from '../../protocol/limits.js';
import type { Protocol } from '../../protocol/names.js';
import type { Logger } from '../../telemetry/logger.js';
import { noBugs, type BugName } from '../bugs.js';
import { createTracing, type Tracing } from '../../telemetry/tracing.js';
import { createRegistry, startMetricsServer } from '../../telemetry/metrics.js';
import type { StartedService } from '../service.js';
import { Dispatcher } from './dispatcher.js';
import { LegacyDispatcher } from './legacy-dispatcher.js';
import { createIngressMetrics } from './metrics.js';
import { Router } from './router.js';
import { IngressApi } from './http-api.js';
import { PendingTable } from './pending-table.js';
import { createTableMetrics } from './table-metrics.js';
import { createFaultHooks } from '../fault-hooks.js';

export interface IngressOptions {
  node: string;
  logAddress: string;
  host?: string;
  port?: number;
  metricsPort?: number;
  protocol?: Protocol;
  rpcTimeoutMs?: number;
  longPollMs?: number;
  /** 0 = no deadline: the request waits as long as it takes. */
  requestTimeoutMs?: number;
  maxPending?: number;
  maxBodyBytes?: number;
  /** Bug switches (src/services/bugs.ts); none by default. */
  bugs?: ReadonlySet<BugName>;
  /** Bound on receiving a request's headers and body (408 beyond); see limits.receiveMsMax. */
  receiveTimeoutMs?: number;
  logger: Logger;
  registry?: Registry;
  /** Defaults to OTLP export configured from `env` (OTEL_* variables). */
  tracing?: Tracing;
  env?: NodeJS.ProcessEnv;
}

export { INVOCATION_ID_HEADER, TRACE_ID_HEADER } from '../../protocol/names.js';

export async function startIngress(o: IngressOptions): Promise<StartedService> {
  const host = o.host ?? '127.0.0.1';
  const registry = o.registry ?? createRegistry({ service: o.node });
  const pending = new PendingTable();
  const metrics = createIngressMetrics(
    registry,
    () => pending.oldestAgeSeconds(performance.now()),
    () => router.current?.partitions.map((p) => p.partition) ?? [],
  );
  const tracing = o.tracing ?? createTracing(o.node, o.logger, o.env);
  const bugs = o.bugs ?? noBugs;
  const faultHooks = createFaultHooks(registry);
  const router = new Router(o.logAddress, o.node, o.logger, bugs, createTableMetrics(registry));
  router.start();
  const protocol = o.protocol ?? 'rpc';
  const dispatcher = new Dispatcher({
    router,
    metrics,
    logger: o.logger,
    tracer: tracing.tracer,
    rpcTimeoutMs: o.rpcTimeoutMs ?? 5000,
    longPollMs: o.longPollMs ?? 30_000,
    bugs,
  });
  let log: LogClient | undefined;
  let legacy: LegacyDispatcher | undefined;
  if (protocol === 'legacy') {
    log = createLogClient(o.logAddress);
    legacy = new LegacyDispatcher(router, log, o.node, o.logger);
    legacy.start();
  }
  const api = new IngressApi(
    {
      requestTimeoutMs: o.requestTimeoutMs ?? 0,
      maxPending: o.maxPending ?? 10_000,
      maxBodyBytes: Math.min(o.maxBodyBytes ?? limits.payloadBytesMax, limits.payloadBytesMax),
      bugs,
    },
    router,
    dispatcher,
    legacy,
    metrics,
    pending,
    tracing,
  );
  // A slow or silent sender (headers or a body shorter than its content-length) gets 408
  // once receiving its request took longer than the bound; a response may take as long as
  // the handler does (Node's request timeout ends when the request has been received).
  const receiveMs = Math.min(o.receiveTimeoutMs ?? limits.receiveMsDefault, limits.receiveMsMax);
  const server = http.createServer({ connectionsCheckingInterval: Math.min(1000, receiveMs) }, (req, res) =>
    api.handle(req, res),
  );
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = receiveMs;
  server.requestTimeout = receiveMs;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const httpPort = (server.address() as AddressInfo).port;
  const metricsServer = await startMetricsServer(registry, host, o.metricsPort ?? 0, [faultHooks.route]);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      api.closing = true;
      legacy?.stop();
      await router.stop();
      log?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await metricsServer.stop();
      faultHooks.offAll();
      await tracing.shutdown();
    })());
  return {
    role: 'ingress',
    node: o.node,
    addresses: { http: `http://${host}:${httpPort}`, metrics: metricsServer.url },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
