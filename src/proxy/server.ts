// The embedded Toxiproxy-compatible server: the HTTP API (and /metrics) on one port,
// one TCP listener per enabled proxy. Loopback by default; stop() closes every listener
// and socket.
import http from 'node:http';
import type net from 'node:net';
import type { Registry } from 'prom-client';
import { createApiHandler } from './api.js';
import { ProxyCollection } from './proxy-collection.js';
import { createProxyMetrics } from './proxy-metrics.js';
import { createRegistry } from '../telemetry/metrics.js';
import { ProxyEvents } from './proxy-events.js';
import { createRandom } from '../util/random.js';
import { silentLogger, type Logger } from '../telemetry/logger.js';

export interface ToxiproxyServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8474; 0 picks a free port. */
  port?: number;
  /** Draws toxicity per connection and direction; wins over `seed`. */
  random?: () => number;
  /**
   * Extension: toxicity (and packet_loss) drawn from this seed (the run's seed in runs,
   * `limbo proxy --seed`), so a replay draws the same. Default: Math.random, as 2.12.
   */
  seed?: number;
  /** Extension: how many events GET /events keeps (default 10,000). */
  eventCapacity?: number;
  logger?: Logger;
  registry?: Registry;
}

export interface StartedToxiproxyServer extends AsyncDisposable {
  /** http://HOST:PORT */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly metricsUrl: string;
  readonly registry: Registry;
  /** What GET /events serves. */
  readonly events: ProxyEvents;
  stop(): Promise<void>;
}

export async function startToxiproxyServer(
  options: ToxiproxyServerOptions = {},
): Promise<StartedToxiproxyServer> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? silentLogger;
  const registry = options.registry ?? createRegistry();
  const metrics = createProxyMetrics(registry);
  const events = new ProxyEvents(options.eventCapacity);
  const random =
    options.random ??
    (options.seed !== undefined ? createRandom(options.seed).fork('toxicity').next : Math.random);
  const collection = new ProxyCollection({
    random,
    logger,
    onReceived: metrics.received,
    onSent: metrics.sent,
    onEvent: (_proxy, e) => {
      events.record(e);
      metrics.event(e);
    },
  });
  const server = http.createServer(createApiHandler(collection, registry, logger, events));
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8474, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as net.AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const url = `http://${shownHost}:${port}`;
  logger.info('toxiproxy api listening', { url });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await collection.exclusive(() => collection.stopAll());
      await closed;
    })());
  return {
    url,
    host,
    port,
    metricsUrl: `${url}/metrics`,
    registry,
    events,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
