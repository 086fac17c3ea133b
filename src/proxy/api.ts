// The Toxiproxy HTTP API (2.12.0) over a ProxyCollection, plus GET /metrics.
//
//   request ─▶ route (404 / 405) ─▶ browser check (403) ─▶ body (≤ 1 MiB, JSON) ─▶ collection
//   error  ─▶ {"error": message, "status": code}\n as text/plain (Go's http.Error)
//
// As in 2.12 (gorilla/mux), an unknown path is `404 page not found\n`, a known path with
// the wrong method an empty 405, and neither goes through the browser check.
import type http from 'node:http';
import type { Registry } from 'prom-client';
import { ApiError } from './api-error.js';
import { parseJsonBody } from './go-json.js';
import { proxyJson, toxicJson, type ProxyCollection } from './proxy-collection.js';
import type { Logger } from '../telemetry/logger.js';
import { messageOf } from '../util/errors.js';
import type { ProxyEvents } from './proxy-events.js';

export const toxiproxyVersion = '2.12.0';
const maxBodyBytes = 1024 * 1024;

type Reply = [status: number, body: unknown];
/** A body sent as it is (the Prometheus text), not as JSON. */
class RawBody {
  constructor(
    readonly contentType: string,
    readonly text: string,
  ) {}
}
type Handler = (
  params: string[],
  body: () => Promise<unknown>,
  query: URLSearchParams,
) => Reply | Promise<Reply>;
interface Route {
  pattern: RegExp;
  methods: Record<string, Handler>;
}

export function createApiHandler(
  collection: ProxyCollection,
  registry: Registry,
  logger: Logger,
  events: ProxyEvents,
): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const c = collection;
  const ex = <T>(op: () => Promise<T>): Promise<T> => c.exclusive(op);
  const routes: Route[] = [
    {
      pattern: /^\/proxies$/,
      methods: {
        GET: () => [200, new RawBody('application/json', proxyIndexJson(c))],
        POST: async (_p, body) => {
          const b = await body();
          return ex(async () => [201, proxyJson(await c.create(b))]);
        },
      },
    },
    {
      pattern: /^\/populate$/,
      methods: {
        // Every error of populate, bad body included, is JSON with the proxies created so
        // far (null when none, as Go marshals an empty slice); success lists them ([] when
        // none: the node client throws on null).
        POST: async (_p, body) => {
          const failed = (error: ApiError, list: unknown[]): Reply => [
            error.status,
            { error: error.message, status: error.status, proxies: list.length > 0 ? list : null },
          ];
          let b: unknown;
          try {
            b = await body();
          } catch (err) {
            if (err instanceof ApiError) return failed(err, []);
            throw err;
          }
          return ex(async () => {
            let result: Awaited<ReturnType<ProxyCollection['populate']>>;
            try {
              result = await c.populate(b);
            } catch (err) {
              if (err instanceof ApiError) return failed(err, []);
              throw err;
            }
            const list = result.proxies.map(proxyJson);
            if (result.error) return failed(result.error, list);
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
      pattern: /^\/metrics$/,
      methods: {
        GET: async () => [200, new RawBody(registry.contentType, await registry.metrics())],
      },
    },
    {
      // Extension: GET /events?since=<seq>.
      pattern: /^\/events$/,
      methods: { GET: (_p, _b, query) => [200, events.since(nonNegativeInt(query.get('since')))] },
    },
    {
      pattern: /^\/version$/,
      // 2.12 writes this one by hand (fmt.Sprintf), and toxiproxy-ruby's `Toxiproxy.version`
      // hands the body to its caller as it is: so the same bytes, space and newline included.
      methods: {
        GET: () => [
          200,
          new RawBody('application/json;charset=utf-8', `{"version": "${toxiproxyVersion}"}\n`),
        ],
      },
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
      if (value instanceof RawBody) {
        res.writeHead(status, { 'content-type': value.contentType });
        res.end(value.text);
        return;
      }
      const text = JSON.stringify(value);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(text);
    };
    const sendError = (status: number, message: string): void =>
      httpError(res, status, JSON.stringify({ error: message, status }));
    const [path = '/', search = ''] = (req.url ?? '/').split('?');
    const method = req.method ?? 'GET';
    let params: string[] | undefined;
    const route = routes.find((r) => {
      const m = r.pattern.exec(path);
      if (m) params = m.slice(1).map((s) => safeDecode(s));
      return m !== null;
    });
    if (!route || !params) return httpError(res, 404, '404 page not found');
    const handler = route.methods[method];
    if (!handler) {
      res.writeHead(405);
      res.end();
      return;
    }
    if ((req.headers['user-agent'] ?? '').startsWith('Mozilla/'))
      return httpError(res, 403, 'User agent not allowed');
    const readJson = (): Promise<unknown> => readBody(req).then(parseJsonBody);
    const route0 = params;
    Promise.resolve()
      .then(() => handler(route0, readJson, new URLSearchParams(search)))
      .then(
        ([status, value]) => send(status, value),
        (err: unknown) => {
          if (err instanceof ApiError) return sendError(err.status, err.message);
          logger.error('api request failed', { method, path, err });
          sendError(500, messageOf(err));
        },
      );
  };
}

/** Go's http.Error: plain text, no sniffing, the message and a newline. */
/**
 * GET /proxies as Go's json.Marshal writes a map: keys in byte order (UTF-8, sort.Strings).
 * Written by hand because a JS object puts integer-like keys ("9" before "10") first, and
 * clients iterate in this order (toxiproxy-ruby's `Toxiproxy.all`, the Python and node
 * clients' proxy maps).
 */
function proxyIndexJson(c: ProxyCollection): string {
  const proxies = c.all().map((p) => ({ key: Buffer.from(p.name, 'utf8'), p }));
  proxies.sort((a, b) => Buffer.compare(a.key, b.key));
  return `{${proxies.map(({ p }) => `${JSON.stringify(p.name)}:${JSON.stringify(proxyJson(p))}`).join(',')}}`;
}

function httpError(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'x-content-type-options': 'nosniff',
  });
  res.end(`${message}\n`);
}

function nonNegativeInt(text: string | null): number {
  const n = Number(text ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
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
