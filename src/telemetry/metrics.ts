// One prom-client Registry per service instance (never the global one), with the default
// process metrics, served on GET /metrics by a tiny HTTP server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';

export function createRegistry(defaultLabels: Record<string, string> = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(defaultLabels);
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * A route served beside /metrics (e.g. the services' fault hooks): it answers the request
 * and resolves true, or resolves false to leave it to the next route (404 at the end).
 */
export type ExtraRoute = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean>;

export interface StartedMetricsServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Serves `GET /metrics` (and `GET /health`) for a registry. Extra routes can be passed for
 * services that expose a little more over plain HTTP.
 */
export async function startMetricsServer(
  registry: Registry,
  host: string,
  port: number,
  routes: readonly ExtraRoute[] = [],
): Promise<StartedMetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      registry
        .metrics()
        .then((text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
        })
        .catch((err: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(err));
        });
      return;
    }
    if (req.method === 'GET' && path === '/health') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok\n');
      return;
    }
    void (async () => {
      for (const route of routes) if (await route(req, res)) return;
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found\n');
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${bound}/metrics`,
    port: bound,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
