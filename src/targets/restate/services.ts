// The reference cluster's built-in services, written with the Restate SDK so the same
// workloads run against a real Restate cluster:
//   Echo/echo                 returns its input
//   Sleep/sleep {ms}          answers after ms (a durable Restate timer, bounded)
//   Counter/{key}/add {delta} → the new value (virtual object: one call at a time per key)
//   Counter/{key}/get         → the value
//   Flaky/call {failFirst}    fails its first attempts (counted by this endpoint), then succeeds
// Served over HTTP/2 on 127.0.0.1 (port 0 by default) by `startRestateServices()`.
import './promise-polyfill.js';
import { createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as restate from '@restatedev/restate-sdk';
import { MAX_SLEEP_MS } from '../../services/processor/handlers.js';

/** Bound on the invocations whose attempts Flaky remembers. */
const FLAKY_MEMORY = 10_000;

function numberField(input: unknown, field: string, fallback?: number): number {
  const v = (input as Record<string, unknown> | null | undefined)?.[field];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new restate.TerminalError(`"${field}" must be a number`);
  return v;
}

export const echo = restate.service({
  name: 'Echo',
  handlers: {
    echo: (_ctx: restate.Context, input: unknown): Promise<unknown> => Promise.resolve(input),
  },
});

export const sleepService = restate.service({
  name: 'Sleep',
  handlers: {
    sleep: async (ctx: restate.Context, input: unknown): Promise<{ slept: number }> => {
      const ms = numberField(input, 'ms');
      if (ms < 0 || ms > MAX_SLEEP_MS)
        throw new restate.TerminalError(`"ms" must be between 0 and ${MAX_SLEEP_MS}`);
      await ctx.sleep(ms);
      return { slept: ms };
    },
  },
});

export const counter = restate.object({
  name: 'Counter',
  handlers: {
    add: async (ctx: restate.ObjectContext, input: unknown): Promise<number> => {
      const delta = numberField(input, 'delta', 1);
      const next = ((await ctx.get<number>('value')) ?? 0) + delta;
      ctx.set('value', next);
      return next;
    },
    get: restate.handlers.object.shared(
      async (ctx: restate.ObjectSharedContext): Promise<number> => (await ctx.get<number>('value')) ?? 0,
    ),
  },
});

/** Flaky counts attempts per invocation id in this process (like the reference: "on this leader"). */
export function createFlaky() {
  const attempts = new Map<string, number>();
  return restate.service({
    name: 'Flaky',
    handlers: {
      call: (ctx: restate.Context, input: unknown): Promise<{ attempts: number }> => {
        const failFirst = numberField(input, 'failFirst', 1);
        const id = String(ctx.request().id);
        const attempt = (attempts.get(id) ?? 0) + 1;
        attempts.delete(id);
        attempts.set(id, attempt);
        while (attempts.size > FLAKY_MEMORY) attempts.delete(attempts.keys().next().value!);
        if (attempt <= failFirst) throw new Error(`flaky failure ${attempt} of ${failFirst}`);
        attempts.delete(id);
        return Promise.resolve({ attempts: attempt });
      },
    },
    // Restate's default first retry waits 500 ms; keep Flaky's retries quick but bounded.
    options: { retryPolicy: { initialInterval: 50, maxInterval: 1000, maxAttempts: 100 } },
  });
}

export interface StartedRestateServices extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`: the URI to register with `POST /deployments`. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Serves the services over HTTP/2 (what Restate expects of a deployment). */
export async function startRestateServices(
  options: { host?: string; port?: number } = {},
): Promise<StartedRestateServices> {
  const handler = restate.createEndpointHandler({
    services: [echo, sleepService, counter, createFlaky()],
  });
  const server: Http2Server = createServer(handler);
  const sessions = new Set<import('node:http2').ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Restate keeps its HTTP/2 connections open; close them so `close` can finish.
      for (const s of sessions) s.destroy();
    }));
  return { url: `http://${address}:${port}`, port, stop, [Symbol.asyncDispose]: stop };
}
