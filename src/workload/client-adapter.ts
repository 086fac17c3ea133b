// A target's client as code that runs in the runner, in whatever protocol the system speaks
// (NATS, gRPC, a database driver …), instead of an HTTP API. The workload hands each client
// its own session, opened on first use against the address of one client link (so every
// fault on that link sits between the client and the system), and asks the session to
// perform each op. limbo owns the clock: an op whose `perform` has not settled when the
// client gives up, when the op's timeout passes or when the run stops is ended by limbo
// (gave up / client_timeout / left open), whatever the adapter does afterwards.
//
//   workload client i ─connect({address of client->ingress-j})─▶ session
//   op ─▶ session.perform(op, {signal, timeoutMs, traceparent}) ─▶ {outcome, value?, invocationId?}
//   run end ─▶ session.close() (bounded)
import type { InvocationTarget } from '../protocol/ids.js';
import { messageOf } from '../util/errors.js';
import type { ClientOp } from './client-api.js';
import type { Completion } from './history.js';

/** What one op did, as the adapter saw it. */
export interface PerformResult {
  /**
   * `ok`: done, with its answer. `fail`: certainly not done (refused before any effect).
   * `unknown`: it may or may not have taken effect (a timeout, a lost connection, an error
   * after the request left).
   */
  outcome: 'ok' | 'fail' | 'unknown';
  /** counterAdd / counterGet: the counter's value in the answer (counterGet needs it). */
  value?: number;
  /** The invocation the op made or waited for (send: needed for the attach that follows). */
  invocationId?: string;
  /** Why it failed or is unknown, in the system's words (kept in the history). */
  error?: string;
  /** The answer, kept in the history as the op's response body (small, JSON-friendly). */
  answer?: unknown;
}

export interface PerformContext {
  /** Aborted when the client gives up, the op's time is up or the run stops: stop waiting then. */
  signal: AbortSignal;
  /** The op's bound; limbo ends the op as client_timeout at this point in any case. */
  timeoutMs: number;
  /** The op's W3C traceparent, for systems that carry trace context (else ignore it). */
  traceparent: string;
}

/** One client's connection(s) to the system. */
export interface ClientSession {
  perform(op: ClientOp, ctx: PerformContext): Promise<PerformResult>;
  /** Closes its connections (bounded by limbo; errors are ignored). */
  close(): Promise<void> | void;
}

export interface ClientEndpoint {
  /** host:port of the client link this client goes through (the link's proxy). */
  address: string;
  /** The same as an http:// URL, for adapters that want one. */
  url: string;
  /** The workload client (Jepsen process) number; -1 for the runner's own final reads. */
  client: number;
}

export interface ClientAdapter {
  readonly kind: 'limbo-client-adapter';
  readonly name: string;
  /**
   * Opens a session for one client. Called at the client's first op and again after a
   * session's connect failed; a throw fails that op as refused (nothing was sent).
   */
  connect(endpoint: ClientEndpoint): Promise<ClientSession>;
  /** The invocation id known before an op is sent (idempotent ops), if the client can know it. */
  invocationIdFor?(target: InvocationTarget, idempotencyKey: string | undefined): string | undefined;
}

/** Marks an adapter: `client: { adapter: defineClientAdapter({...}) }` in a declaration. */
export function defineClientAdapter(a: Omit<ClientAdapter, 'kind'>): ClientAdapter {
  return { ...a, kind: 'limbo-client-adapter' };
}

export function isClientAdapter(x: unknown): x is ClientAdapter {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'limbo-client-adapter';
}

/** Why limbo stopped waiting for an op before the adapter answered. */
export type StopReason = 'gave_up' | 'timeout' | 'aborted';

/**
 * One client's lazily connected session; `connect` again after a failed connect. Concurrent
 * first ops share one connect.
 */
export class AdapterClient {
  private session: Promise<ClientSession> | undefined;
  private closed = false;

  constructor(
    private readonly adapter: ClientAdapter,
    private readonly endpoint: ClientEndpoint,
  ) {}

  get name(): string {
    return this.adapter.name;
  }

  invocationIdFor(target: InvocationTarget, key: string | undefined): string | undefined {
    return this.adapter.invocationIdFor?.(target, key);
  }

  /**
   * Performs one op, bounded by limbo's clock: resolves with the adapter's result, or with
   * how limbo stopped waiting (`gave_up` at `giveUpAfterMs`, `timeout` at `timeoutMs`,
   * `aborted` when `runSignal` fires). A connect failure is a refusal: the op failed.
   */
  async perform(
    op: ClientOp,
    opts: { timeoutMs: number; traceparent: string; runSignal?: AbortSignal; giveUpAfterMs?: number },
  ): Promise<{ result: PerformResult } | { stopped: StopReason }> {
    if (this.closed || opts.runSignal?.aborted === true) return { stopped: 'aborted' };
    const opAbort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let giveUpTimer: NodeJS.Timeout | undefined;
    let onRunAbort: (() => void) | undefined;
    const stopped = new Promise<{ stopped: StopReason }>((resolve) => {
      const stop = (why: StopReason): void => {
        opAbort.abort(new Error(`limbo stopped waiting: ${why}`));
        resolve({ stopped: why });
      };
      timer = setTimeout(() => stop('timeout'), opts.timeoutMs);
      if (opts.giveUpAfterMs !== undefined && opts.giveUpAfterMs < opts.timeoutMs)
        giveUpTimer = setTimeout(() => stop('gave_up'), opts.giveUpAfterMs);
      onRunAbort = () => stop('aborted');
      opts.runSignal?.addEventListener('abort', onRunAbort, { once: true });
    });
    const performed = (async (): Promise<{ result: PerformResult }> => {
      let session: ClientSession;
      try {
        session = await this.sessionOf();
      } catch (err) {
        return { result: { outcome: 'fail', error: `connect failed: ${messageOf(err)}` } };
      }
      try {
        const r = await session.perform(op, {
          signal: opAbort.signal,
          timeoutMs: opts.timeoutMs,
          traceparent: opts.traceparent,
        });
        return { result: checkedResult(this.adapter.name, r) };
      } catch (err) {
        // A throw after the op was handed over: it may have left; its outcome is unknown.
        return { result: { outcome: 'unknown', error: messageOf(err) } };
      }
    })();
    try {
      return await Promise.race([performed, stopped]);
    } finally {
      clearTimeout(timer);
      clearTimeout(giveUpTimer);
      if (onRunAbort !== undefined) opts.runSignal?.removeEventListener('abort', onRunAbort);
      // A perform left behind must not reject unobserved.
      performed.catch(() => undefined);
    }
  }

  /** Closes the session, bounded by `boundMs`; later ops are left open (aborted). */
  async close(boundMs = 2000): Promise<void> {
    this.closed = true;
    const s = this.session;
    this.session = undefined;
    if (s === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      s.then((session) => session.close()).catch(() => undefined),
      new Promise((r) => (timer = setTimeout(r, boundMs))),
    ]);
    clearTimeout(timer);
  }

  private sessionOf(): Promise<ClientSession> {
    if (this.session === undefined) {
      const s = this.adapter.connect(this.endpoint);
      this.session = s;
      // A failed connect is forgotten, so the next op connects again.
      s.catch(() => {
        if (this.session === s) this.session = undefined;
      });
    }
    return this.session;
  }
}

/** An adapter's result, checked: a bad shape is an unknown outcome naming the adapter. */
function checkedResult(adapter: string, r: unknown): PerformResult {
  const o = (r as { outcome?: unknown } | undefined)?.outcome;
  if (o === 'ok' || o === 'fail' || o === 'unknown') return r as PerformResult;
  return {
    outcome: 'unknown',
    error: `client adapter ${adapter} answered ${JSON.stringify(r)?.slice(0, 120)} (no outcome ok | fail | unknown)`,
  };
}

/** An adapter's result as the history's completion. */
export function completionOf(r: PerformResult, withValue: boolean): Completion {
  const response = {
    ...(r.answer !== undefined ? { body: r.answer } : {}),
    ...(withValue && r.value !== undefined ? { value: r.value } : {}),
  };
  const base = {
    ...(r.invocationId !== undefined ? { invocationId: r.invocationId } : {}),
    ...(Object.keys(response).length > 0 ? { response } : {}),
  };
  if (r.outcome === 'ok') return { type: 'ok', ...base };
  const error = { code: 'target_error' as const, message: r.error ?? `the system said ${r.outcome}` };
  return { type: r.outcome === 'fail' ? 'fail' : 'info', ...base, error };
}
