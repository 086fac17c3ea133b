// Small HTTP helpers for tests against a real Restate cluster or the SDK endpoint.
import { connect } from 'node:http2';
export { pidAlive } from '../../src/util/pid-alive.js';

export interface HttpResult {
  status: number;
  text: string;
  /** The body parsed as JSON, undefined when it is not JSON. */
  json: unknown;
  ms: number;
}

/** POST a JSON body; a transport error or timeout becomes status 0 with the message as text. */
export async function post(
  url: string,
  body: unknown,
  options: { headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<HttpResult> {
  return request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify(body),
    timeoutMs: options.timeoutMs,
  });
}

export async function get(url: string, options: { timeoutMs?: number } = {}): Promise<HttpResult> {
  return request(url, { method: 'GET', timeoutMs: options.timeoutMs });
}

async function request(
  url: string,
  o: { method: string; headers?: Record<string, string>; body?: string; timeoutMs?: number | undefined },
): Promise<HttpResult> {
  const started = Date.now();
  try {
    const res = await fetch(url, {
      method: o.method,
      headers: o.headers,
      body: o.body,
      signal: AbortSignal.timeout(o.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json, ms: Date.now() - started };
  } catch (err) {
    return {
      status: 0,
      text: err instanceof Error ? err.message : String(err),
      json: undefined,
      ms: Date.now() - started,
    };
  }
}

/** GET /discover over HTTP/2 (how Restate reads a deployment's services). */
export function discover(baseUrl: string, timeoutMs = 5000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = connect(baseUrl);
    const timer = setTimeout(() => {
      session.destroy();
      reject(new Error(`discover ${baseUrl} timed out`));
    }, timeoutMs);
    session.once('error', (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
    const req = session.request({
      ':path': '/discover',
      accept: 'application/vnd.restate.endpointmanifest.v4+json',
    });
    let status = 0;
    let body = '';
    req.setEncoding('utf8');
    req.on('response', (headers) => {
      status = Number(headers[':status']);
    });
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.once('end', () => {
      clearTimeout(timer);
      session.close();
      resolve({ status, body });
    });
    req.once('error', (err: Error) => {
      clearTimeout(timer);
      session.destroy();
      reject(err);
    });
    req.end();
  });
}
