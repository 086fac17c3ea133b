// The workload's HTTP client: node:http with one keep-alive agent and a bound on open
// connections, a hard per-request timeout, and JSON in/out. It never retries on its own:
// retries are ops of their own in the history. Failures are thrown as HttpClientError with a
// stable code so the op layer can tell "never sent" from "unknown". A request may be given up
// by its client (`giveUpAfterMs`): the socket is destroyed before the answer, as a client
// that stops waiting does, and the request fails with `gave_up`. A request may be read slowly
// (`slowRead`, slow-reader.ts): the client pauses its answer's stream, so its socket stops
// reading and the server's writes meet a full receive window.
import http from 'node:http';
import { LimboError } from '../util/errors.js';

export type HttpClientErrorCode =
  'client_timeout' | 'connection_refused' | 'connection_error' | 'aborted' | 'gave_up';

/** How one request's answer is read slowly. */
export type SlowRead = { readonly bytesPerSec: number } | { readonly pauseMs: number };

export class HttpClientError extends LimboError {
  constructor(
    readonly clientCode: HttpClientErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`E_HTTP_${clientCode.toUpperCase()}`, message, options);
  }
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON, or the raw text if it is not JSON, or undefined if empty. */
  body: unknown;
}

export interface HttpClientOptions {
  maxSockets?: number;
  /** Bound on a response body we keep. */
  maxBodyBytes?: number;
}

export interface HttpClient {
  request(
    url: string,
    init: {
      method: string;
      headers?: Record<string, string>;
      body?: unknown;
      timeoutMs: number;
      signal?: AbortSignal;
      /** The client stops waiting this long after sending: the socket is destroyed (gave_up). */
      giveUpAfterMs?: number;
      /** The client reads the answer slowly: a pause once it starts, or a bounded rate. */
      slowRead?: SlowRead;
    },
  ): Promise<HttpAnswer>;
  close(): void;
}

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 64, maxFreeSockets: 16 });
  const maxBodyBytes = options.maxBodyBytes ?? 1 << 20;
  return {
    request: (url, init) =>
      new Promise<HttpAnswer>((resolve, reject) => {
        const payload = init.body === undefined ? undefined : Buffer.from(JSON.stringify(init.body));
        const headers: Record<string, string> = { ...init.headers };
        if (payload !== undefined) {
          headers['content-type'] = 'application/json';
          headers['content-length'] = String(payload.length);
        }
        let settled = false;
        const fail = (err: HttpClientError): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          clearTimeout(giveUp);
          clearTimeout(readPause);
          req.destroy();
          reject(err);
        };
        // A slow read pauses the answer's stream; while paused, the socket stops reading.
        let readPause: NodeJS.Timeout | undefined;
        const pauseReading = (res: http.IncomingMessage, ms: number): void => {
          res.pause();
          readPause = setTimeout(() => {
            if (!settled) res.resume();
          }, ms);
        };
        const req = http.request(url, { method: init.method, headers, agent }, (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const slow = init.slowRead;
          if (slow !== undefined && 'pauseMs' in slow) pauseReading(res, slow.pauseMs);
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size <= maxBodyBytes) chunks.push(c);
            if (slow !== undefined && 'bytesPerSec' in slow)
              pauseReading(res, (c.length / slow.bytesPerSec) * 1000);
          });
          res.on('error', (err) =>
            fail(new HttpClientError('connection_error', err.message, { cause: err })),
          );
          res.on('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            clearTimeout(giveUp);
            clearTimeout(readPause);
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = undefined;
            if (text !== '') {
              try {
                body = JSON.parse(text);
              } catch {
                body = text;
              }
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
          });
        });
        const timer = setTimeout(
          () => fail(new HttpClientError('client_timeout', `no answer within ${init.timeoutMs} ms`)),
          init.timeoutMs,
        );
        const giveUpAfterMs = init.giveUpAfterMs;
        const giveUp =
          giveUpAfterMs !== undefined && giveUpAfterMs < init.timeoutMs
            ? setTimeout(
                () =>
                  fail(
                    new HttpClientError(
                      'gave_up',
                      `the client gave up ${Math.round(giveUpAfterMs)} ms after sending, before the answer`,
                    ),
                  ),
                giveUpAfterMs,
              )
            : undefined;
        const onAbort = (): void => fail(new HttpClientError('aborted', 'request aborted'));
        if (init.signal?.aborted === true) onAbort();
        init.signal?.addEventListener('abort', onAbort, { once: true });
        req.on('close', () => init.signal?.removeEventListener('abort', onAbort));
        req.on('error', (err: NodeJS.ErrnoException) => {
          const code = err.code === 'ECONNREFUSED' ? 'connection_refused' : 'connection_error';
          fail(new HttpClientError(code, `${err.code ?? ''} ${err.message}`.trim(), { cause: err }));
        });
        req.end(payload);
      }),
    close: () => agent.destroy(),
  };
}
