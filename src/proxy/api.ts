// The Toxiproxy HTTP API (2.12.0) over a ProxyCollection, plus GET /metrics.
//
//   request ─▶ browser check (403) ─▶ route (404 / 405) ─▶ body (≤ 1 MiB, JSON) ─▶ collection
//   error  ─▶ {"error": message, "status": code}
import type http from 'node:http';
import type { Registry } from 'prom-client';
import { ApiError } from './api-error.js';
import { parseJsonBody } from './go-json.js';
import { proxyJson, toxicJson, type ProxyCollection } from './proxy-collection.js';
import type { Logger } from '../telemetry/logger.js';
import { messageOf } from '../util/errors.js';

export const toxiproxyVersion = '2.12.0';
const maxBodyBytes = 1024 * 1024;

type Reply = [status: number, body: unknown];
type Handler = (params: string[], body: () => Promise<unknown>) => Reply | Promise<Reply>;
interface Route {
  pattern: RegExp;
  methods: Record<string, Handler>;
}

export function createApiHandler(
  collection: ProxyCollection,
  registry: Registry,
  logger: Logger,
): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const c = collection;
  const ex = <T>(op: () => Promise<T>): Promise<T> => c.exclusive(op);
  const routes: Route[] = [
    {
      pattern: /^\/proxies$/,
      methods: {
        GET: () => [200, Object.fromEntries(c.all().map((p) => [p.name, proxyJson(p)]))],
        POST: async (_p, body) => {
          const b = await body();
          return ex(async () => [201, proxyJson(await c.create(b))]);
        },
      },
    },
    {
      pattern: /^\/populate$/,
      methods: {
        POST: async (_p, body) => {
          const b = await body();
          return ex(async () => {
            const { proxies, error } = await c.populate(b);
            const list = proxies.map(proxyJson);
            if (error) return [error.status, { error: error.message, status: error.status, proxies: list }];
            return [201, { proxies: list }];
          });
        },
      },
    },
    {
      pattern: /^\/reset$/,
      methods: { POST: async () => ex(async () => [204, await c.reset()]) },
    },
    {
      pattern: /^\/version$/,
      methods: { GET: () => [200, { version: toxiproxyVersion }] },
    },
    {
      pattern: /^\/proxies\/([^/]+)$/,
      methods: {
        GET: ([name]) => [200, proxyJson(c.get(name as string))],
        POST: updateProxy,
        PATCH: updateProxy,
        DELETE: async ([name]) => ex(async () => [204, await c.remove(name as string)]),
      },
    },
    {
      pattern: /^\/proxies\/([^/]+)\/toxics$/,
      methods: {
        GET: ([name]) => [200, proxyJson(c.get(name as string)).toxics],
        POST: async ([name], body) => {
          const proxy = c.get(name as string);
          const b = await body();
          return ex(async () => [200, toxicJson(await c.addToxic(proxy, b))]);
        },
      },
    },
    {
      pattern: /^\/proxies\/([^/]+)\/toxics\/([^/]+)$/,
      methods: {
        GET: ([p, t]) => [200, toxicJson(c.findToxic(c.get(p as string), t as string))],
        POST: updateToxic,
        PATCH: updateToxic,
        DELETE: async ([p, t]) => ex(async () => [204, await c.removeToxic(c.get(p as string), t as string)]),
      },
    },
  ];

  async function updateProxy([name]: string[], body: () => Promise<unknown>): Promise<[number, unknown]> {
    c.get(name as string);
    const b = await body();
    return ex(async () => [200, proxyJson(await c.update(name as string, b))]);
  }
  async function updateToxic([p, t]: string[], body: () => Promise<unknown>): Promise<[number, unknown]> {
    const proxy = c.get(p as string);
    c.findToxic(proxy, t as string);
    const b = await body();
    return ex(async () => [200, toxicJson(await c.updateToxic(proxy, t as string, b))]);
  }

  return (req, res) => {
    const send = (status: number, value: unknown): void => {
      if (status === 204 || value === undefined) {
        res.writeHead(status);
        res.end();
        return;
      }
      const text = JSON.stringify(value);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(text);
    };
    if ((req.headers['user-agent'] ?? '').startsWith('Mozilla/')) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('User agent not allowed\n');
      return;
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const method = req.method ?? 'GET';
    if (path === '/metrics') {
      if (method !== 'GET') return send(405, { error: 'method not allowed', status: 405 });
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
        },
        (err: unknown) => send(500, { error: String(err), status: 500 }),
      );
      return;
    }
    let params: string[] | undefined;
    const route = routes.find((r) => {
      const m = r.pattern.exec(path);
      if (m) params = m.slice(1).map((s) => safeDecode(s));
      return m !== null;
    });
    if (!route || !params) return send(404, { error: 'not found', status: 404 });
    const handler = route.methods[method];
    if (!handler) return send(405, { error: 'method not allowed', status: 405 });
    const readJson = (): Promise<unknown> => readBody(req).then(parseJsonBody);
    const route0 = params;
    Promise.resolve()
      .then(() => handler(route0, readJson))
      .then(
        ([status, value]) => send(status, value),
        (err: unknown) => {
          if (err instanceof ApiError) return send(err.status, { error: err.message, status: err.status });
          logger.error('api request failed', { method, path, err });
          send(500, { error: messageOf(err), status: 500 });
        },
      );
  };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        reject(new ApiError(400, 'bad request body: http: request body too large'));
        req.destroy();
        return;
      }
      parts.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}
