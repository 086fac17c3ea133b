// Seeded clients driving the ingress: either `concurrency` closed-loop clients or an open loop
// at `ratePerSec` (bounded by `maxInFlight`). Each client draws its ops from its own fork of the
// run's random stream, so a seed replays the same op mix. Stopping stops new ops and waits a
// bounded time for the ones in flight; ops still open then stay open in the history (hung).
// Two behaviours of real clients on top: some give up mid-request (give-up.ts), and open-loop
// bursts above capacity come on top of the steady load (bursts.ts), and some read their answers
// slowly (slow-reader.ts).
//
//   random.fork('client-i') ─▶ pick kind by mix ─▶ op ─▶ history (invoke → ok|fail|info)
//   random.fork('give-up-i') ─▶ does this op's client give up, and when
//   random.fork('slow-reader-i') ─▶ does this request's client read its answer slowly
//   burst clients (numbered after the steady ones) ─▶ ops at bursts.ratePerSec, own sockets
import { setMaxListeners } from 'node:events';
import type { Tracer } from '@opentelemetry/api';
import type { Random } from '../util/random.js';
import type { HistoryRecorder } from './history.js';
import { createHttpClient, type HttpClient } from './http-client.js';
import type { ClientApi } from './client-api.js';
import { AdapterClient, type ClientAdapter } from './client-adapter.js';
import { burstAt, burstOpsDue, parseBursts, type BurstPlan, type BurstSpec } from './bursts.js';
import { giveUpDraws, parseGiveUp, type GiveUpPlan, type GiveUpSpec } from './give-up.js';
import {
  parseSlowReaders,
  slowReadingClient,
  type SlowReaderPlan,
  type SlowReaderSpec,
} from './slow-reader.js';
import type { OpMix } from './mix.js';
import {
  callOp,
  counterAddOp,
  counterGetOp,
  idempotentRetryOp,
  sendOp,
  sendRetryOp,
  finalAttachOp,
  type Call,
  type OpContext,
} from './ops.js';

export type { OpMix, OpMixKind } from './mix.js';

/** The final attaches to acknowledged invocations: this many at a time, all within this bound. */
const FINAL_ATTACH_PARALLEL = 16;
const FINAL_ATTACH_BOUND_MS = 20_000;
/**
 * A final counter read that fails is asked again (a read has no effect) until one answers ok,
 * within this bound: a system still settling after the heal (no leader for a while) is given
 * the time a client would give it before its counters are called unreadable.
 */
const FINAL_READ_BOUND_MS = 20_000;
const FINAL_READ_RETRY_MS = 250;
export type { GiveUpSpec, GiveUpRetry } from './give-up.js';
export type { BurstSpec } from './bursts.js';
export type { SlowReaderSpec } from './slow-reader.js';

export interface WorkloadSpec {
  /** Closed-loop clients (default 8 when no rate is given). */
  concurrency?: number;
  /** Open loop: ops started per second, across all clients. */
  ratePerSec?: number;
  /** Bound on ops in flight in the open loop (default 256). */
  maxInFlight?: number;
  mix?: OpMix;
  opTimeoutMs?: number;
  counterKeys?: number;
  /** Pause between a closed-loop client's ops. */
  thinkMs?: number;
  /** Cap on ops started per second across all clients (closed or open loop); none by default. */
  maxRatePerSec?: number;
  /**
   * A send's client attaches to its invocation this long after the send was accepted (default
   * at once): fire now, collect the result later, so attaches meet what changed in between.
   */
  attachAfterMs?: number;
  /**
   * Each counter add works up to this long while holding its key (a uniform draw from 0 to it;
   * default none): at any leadership change some keyed invocations are then mid-run.
   */
  counterHoldMs?: number;
  /**
   * Clients that give up: a share of calls, sends and counter adds abandoned mid-request after
   * a seeded delay (recorded info, outcome unknown), then sent again with the same idempotency
   * key or not at all (give-up.ts). Default: no client gives up.
   */
  giveUp?: GiveUpSpec;
  /**
   * Open-loop bursts above capacity on top of the steady load: every `everyMs`, ops at
   * `ratePerSec` for `lengthMs`, whatever their answers (bursts.ts). A target's rate cap
   * (maxRatePerSec) bounds a burst's rate too. Default: none.
   */
  bursts?: BurstSpec;
  /**
   * Slow readers: a share of requests whose client reads the answer slowly, pausing first or at
   * a bounded rate, so the server's writes meet TCP backpressure (slow-reader.ts). Default: none.
   */
  slowReaders?: SlowReaderSpec;
}

/** The checked give-up, burst and slow-reader options of a spec; a UsageError names what is wrong. */
export function checkWorkloadSpec(spec: WorkloadSpec): {
  giveUp?: GiveUpPlan;
  bursts?: BurstPlan;
  slowReaders?: SlowReaderPlan;
} {
  const giveUp = parseGiveUp(spec.giveUp);
  const bursts = parseBursts(spec.bursts);
  const slowReaders = parseSlowReaders(spec.slowReaders);
  return {
    ...(giveUp !== undefined ? { giveUp } : {}),
    ...(bursts !== undefined ? { bursts } : {}),
    ...(slowReaders !== undefined ? { slowReaders } : {}),
  };
}

/** Clients a burst's ops are spread over (Jepsen processes numbered after the steady clients). */
export const BURST_CLIENTS = 8;
/** A burst starts its due ops this often. */
const BURST_TICK_MS = 5;

export interface WorkloadOptions extends WorkloadSpec {
  baseUrls: readonly string[];
  random: Random;
  history: HistoryRecorder;
  http?: HttpClient;
  /** The target's ingress API (default: the reference ingress's). */
  api?: ClientApi;
  /**
   * The target's own client (any protocol): each client gets a session through the client
   * link of its ingress URL, and every op goes through it instead of HTTP.
   */
  adapter?: ClientAdapter;
  /** Exports one client span per op (service `client`): the root of every op's trace. */
  tracer?: Tracer;
}

export interface StartedWorkload extends AsyncDisposable {
  readonly counterKeys: readonly string[];
  inFlight(): number;
  completed(): number;
  /** Stops starting ops and waits up to `drainMs` for those in flight, aborting none. */
  drain(drainMs: number): Promise<void>;
  /** Drains for up to `drainMs`, then aborts what is still open (it stays open in the history). */
  stop(drainMs?: number): Promise<void>;
  /**
   * After convergence: reads every counter that got adds (for exactlyOnce; a failed read asked
   * again until one answers ok, all within `readBoundMs`, FINAL_READ_BOUND_MS by default), then attaches once more to
   * every invocation the system acknowledged (for acknowledgedEffectsPresent); each bounded,
   * the attaches all within FINAL_ATTACH_BOUND_MS.
   */
  finalReads(timeoutMs?: number, readBoundMs?: number): Promise<void>;
  /** Burst ops started so far, and those due while `bursts.maxInFlight` were open (not started). */
  burstOps(): { started: number; skipped: number };
}

export const defaultMix: OpMix = { call: 0.5, send: 0.2, counterAdd: 0.2, idempotentRetry: 0.1 };

export function startWorkload(options: WorkloadOptions): StartedWorkload {
  if (options.baseUrls.length === 0) throw new Error('workload needs at least one ingress URL');
  const { giveUp, bursts, slowReaders } = checkWorkloadSpec(options);
  const http = options.http ?? createHttpClient({ maxSockets: Math.max(16, (options.concurrency ?? 0) * 2) });
  const ownsHttp = options.http === undefined;
  const mix = options.mix ?? defaultMix;
  const opTimeoutMs = options.opTimeoutMs ?? 30_000;
  const counterKeys = Array.from({ length: options.counterKeys ?? 4 }, (_, i) => `c${i}`);
  const abort = new AbortController();
  // Every request in flight listens on this one signal: the bound is the number of ops in flight.
  setMaxListeners(
    Math.max(64, (options.concurrency ?? 8) * 4, options.maxInFlight ?? 256) + (bursts?.maxInFlight ?? 0),
    abort.signal,
  );
  let stopping = false;
  const running = new Set<Promise<unknown>>();
  const sessions = new Set<AdapterClient>();
  const adapterClient = (process: number, baseUrl: string): AdapterClient | undefined => {
    if (options.adapter === undefined) return undefined;
    const s = new AdapterClient(options.adapter, {
      address: new URL(baseUrl).host,
      url: baseUrl,
      client: process,
    });
    sessions.add(s);
    return s;
  };
  const closeSessions = async (list: Iterable<AdapterClient>): Promise<void> => {
    await Promise.all([...list].map((s) => s.close()));
  };

  // Invocations the system acknowledged, attached to once more by finalReads.
  const acknowledged = new Map<string, Call>();
  const context = (process: number, client = http): OpContext => {
    let n = 0;
    const baseUrl = options.baseUrls[Math.abs(process) % options.baseUrls.length]!;
    const adapter = adapterClient(process, baseUrl);
    return {
      http:
        slowReaders !== undefined
          ? slowReadingClient(client, slowReaders, options.random.fork(`slow-reader-${process}`))
          : client,
      history: options.history,
      random: options.random.fork(`client-${process}`),
      process,
      baseUrl,
      ...(adapter !== undefined ? { adapter } : {}),
      opTimeoutMs,
      counterKeys,
      acknowledged,
      nextKey: () => `p${process}-${options.random.seed}-${n++}`,
      signal: abort.signal,
      ...(options.api !== undefined ? { api: options.api } : {}),
      ...(options.tracer !== undefined ? { tracer: options.tracer } : {}),
      ...(options.attachAfterMs !== undefined ? { attachAfterMs: options.attachAfterMs } : {}),
      ...(options.counterHoldMs !== undefined ? { counterHoldMs: options.counterHoldMs } : {}),
      ...(giveUp !== undefined
        ? { giveUp: giveUpDraws(giveUp, options.random.fork(`give-up-${process}`)) }
        : {}),
    };
  };
  // The rate cap: each op start takes the next slot, 1000/maxRatePerSec ms after the previous.
  const slotMs = options.maxRatePerSec !== undefined ? 1000 / options.maxRatePerSec : 0;
  let nextSlotAt = 0;
  const takeSlot = async (): Promise<void> => {
    if (slotMs === 0) return;
    const now = Date.now();
    nextSlotAt = Math.max(nextSlotAt + slotMs, now);
    const waitMs = nextSlotAt - now;
    if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
  };
  const runOne = (ctx: OpContext, opMix: OpMix = mix): Promise<unknown> => {
    const kind = ctx.random.weighted(opMix);
    const p =
      kind === 'send'
        ? sendOp(ctx)
        : kind === 'counterAdd'
          ? counterAddOp(ctx)
          : kind === 'sendRetry'
            ? sendRetryOp(ctx)
            : kind === 'idempotentRetry'
              ? idempotentRetryOp(ctx)
              : callOp(ctx);
    running.add(p);
    void p.finally(() => running.delete(p));
    return p;
  };

  let ticker: NodeJS.Timeout | undefined;
  if (options.ratePerSec !== undefined) {
    const maxInFlight = options.maxInFlight ?? 256;
    const clients = Array.from({ length: Math.max(1, options.concurrency ?? 8) }, (_, i) => context(i));
    let next = 0;
    // The bound counts the open loop's own ops: a burst on top does not hold the steady load back.
    let open = 0;
    ticker = setInterval(
      () => {
        if (stopping || open >= maxInFlight) return;
        open++;
        void runOne(clients[next++ % clients.length]!).finally(() => open--);
      },
      Math.max(1, 1000 / Math.min(options.ratePerSec, options.maxRatePerSec ?? Number.POSITIVE_INFINITY)),
    );
  } else {
    const loops = Math.max(1, options.concurrency ?? 8);
    for (let i = 0; i < loops; i++) {
      const ctx = context(i);
      const loop = async (): Promise<void> => {
        while (!stopping) {
          await takeSlot();
          if (stopping) break;
          await runOne(ctx);
          if (options.thinkMs !== undefined && options.thinkMs > 0 && !stopping)
            await new Promise((r) => setTimeout(r, options.thinkMs));
        }
      };
      void loop();
    }
  }

  // Bursts: on each tick, start the ops due so far (a late tick catches up), each on a burst
  // client of its own and its own sockets; between bursts, sleep until the next one.
  const burstCount = { started: 0, skipped: 0 };
  let burstTimer: NodeJS.Timeout | undefined;
  let burstHttp: HttpClient | undefined;
  if (bursts !== undefined) {
    const plan: BurstPlan = {
      ...bursts,
      ratePerSec: Math.min(bursts.ratePerSec, options.maxRatePerSec ?? Number.POSITIVE_INFINITY),
    };
    const client = createHttpClient({ maxSockets: plan.maxInFlight });
    burstHttp = client;
    const first = Math.max(1, options.concurrency ?? 8);
    const clients = Array.from({ length: BURST_CLIENTS }, (_, i) => context(first + i, client));
    const startedAt = performance.now();
    let open = 0;
    let next = 0;
    const tick = (): void => {
      if (stopping) return;
      const elapsedMs = performance.now() - startedAt;
      const due = burstOpsDue(plan, elapsedMs);
      while (burstCount.started + burstCount.skipped < due) {
        if (open >= plan.maxInFlight) {
          burstCount.skipped++;
          continue;
        }
        burstCount.started++;
        open++;
        void runOne(clients[next++ % clients.length]!, plan.mix ?? mix).finally(() => open--);
      }
      const at = burstAt(plan, elapsedMs);
      burstTimer = setTimeout(tick, at.inBurst ? BURST_TICK_MS : Math.max(1, at.nextStartMs - elapsedMs));
    };
    burstTimer = setTimeout(tick, plan.firstAtMs);
  }

  const drain = async (drainMs: number): Promise<void> => {
    stopping = true;
    if (ticker !== undefined) clearInterval(ticker);
    clearTimeout(burstTimer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...running]),
      new Promise((r) => (timer = setTimeout(r, drainMs))),
    ]);
    clearTimeout(timer);
  };
  const stop = async (drainMs = opTimeoutMs): Promise<void> => {
    await drain(drainMs);
    // Ops still open stay open in the history; abort their sockets so nothing outlives the run.
    abort.abort();
    if (ownsHttp) http.close();
    burstHttp?.close();
    await closeSessions(sessions);
  };
  return {
    counterKeys,
    inFlight: () => options.history.inFlight(),
    completed: () => options.history.completed(),
    drain,
    stop,
    finalReads: async (timeoutMs = Math.min(opTimeoutMs, 5000), readBoundMs = FINAL_READ_BOUND_MS) => {
      // Only counters something was added to; all read at once, each bounded.
      const used = new Set(
        options.history.ops
          .filter((o) => o.type === 'invoke' && o.kind === 'counterAdd')
          .map((o) => o.request?.counterKey),
      );
      const reader = createHttpClient({ maxSockets: FINAL_ATTACH_PARALLEL });
      const { giveUp: _noGiveUp, ...base } = context(-1);
      try {
        const ctx: OpContext = { ...base, http: reader, signal: undefined, opTimeoutMs: timeoutMs };
        const readDeadline = Date.now() + readBoundMs;
        await Promise.all(
          counterKeys
            .filter((k) => used.has(k))
            .map(async (key) => {
              while ((await counterGetOp(ctx, key, true)).type !== 'ok' && Date.now() < readDeadline)
                await new Promise((r) => setTimeout(r, FINAL_READ_RETRY_MS));
            }),
        );
        // Then every acknowledged invocation once more, a few at a time, within one bound for
        // all: what the system acknowledged must still be there once it has converged. Those
        // the bound leaves unasked are not judged.
        const queue = [...acknowledged.entries()];
        const deadline = Date.now() + FINAL_ATTACH_BOUND_MS;
        let next = 0;
        await Promise.all(
          Array.from({ length: FINAL_ATTACH_PARALLEL }, async () => {
            while (next < queue.length && Date.now() < deadline) {
              const [invocationId, call] = queue[next++]!;
              await finalAttachOp(ctx, invocationId, call);
            }
          }),
        );
      } finally {
        reader.close();
        if (base.adapter !== undefined) {
          sessions.delete(base.adapter);
          await closeSessions([base.adapter]);
        }
      }
    },
    burstOps: () => ({ ...burstCount }),
    [Symbol.asyncDispose]: () => stop(0),
  };
}
