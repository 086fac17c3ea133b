// One way to wait for something to become true, bounded: a probe polled until it yields a
// value or the deadline passes. A probe that throws or answers "not yet" is retried; the
// timeout names what was awaited and the last reason it was not there yet. Strategies for
// the usual readiness checks (an HTTP answer, a TCP accept, a line in a log, a predicate)
// build probes, so targets and runtimes never hand-write a readiness loop.
//
//   waitFor(probe, { what, timeoutMs }) ─▶ probe() every intervalMs ─▶ value | TimeoutError(what, last)
import { Socket } from 'node:net';
import { TimeoutError, messageOf } from './errors.js';

/** One look: the awaited value, or undefined / false for "not yet" (a throw is "not yet" too, with its reason). */
export type Probe<T> = () => Promise<T | undefined | false>;

export interface WaitOptions {
  /** What is awaited, for the timeout's message ("every partition has a leader"). */
  what: string;
  timeoutMs: number;
  /** Pause between looks (default 100 ms). */
  intervalMs?: number;
  /** Gives up early (the wait rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Checked before each look: an error here is final (e.g. the process being awaited exited). */
  giveUpIf?: () => Error | undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it yields a value; rejects with a TimeoutError naming `what` at the deadline. */
export async function waitFor<T>(probe: Probe<T>, o: WaitOptions): Promise<T> {
  const deadline = performance.now() + o.timeoutMs; // steady: a wall clock step moves no wait
  let last: string;
  for (;;) {
    o.signal?.throwIfAborted();
    const fatal = o.giveUpIf?.();
    if (fatal !== undefined) throw fatal;
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = 'not yet';
    } catch (err) {
      last = messageOf(err);
    }
    if (performance.now() >= deadline)
      throw new TimeoutError(`${o.what}: not within ${o.timeoutMs} ms (last: ${last})`);
    await sleep(Math.min(o.intervalMs ?? 100, Math.max(1, deadline - performance.now())));
  }
}

export interface HttpProbeOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Bound on one request (default 1500 ms). */
  requestTimeoutMs?: number;
  /** What counts as ready (default: status 200). A string it returns is the "not yet" reason. */
  accept?: (status: number, body: string) => boolean | string;
}

/** Ready when `url` answers as `accept` wants (default 200); each request is bounded. */
export function httpProbe(url: string | (() => string), o: HttpProbeOptions = {}): Probe<true> {
  return async () => {
    const res = await fetch(typeof url === 'string' ? url : url(), {
      method: o.method ?? 'GET',
      ...(o.headers !== undefined ? { headers: o.headers } : {}),
      ...(o.body !== undefined ? { body: o.body } : {}),
      signal: AbortSignal.timeout(o.requestTimeoutMs ?? 1500),
    });
    const body = await res.text();
    const verdict = o.accept !== undefined ? o.accept(res.status, body) : res.status === 200;
    if (verdict === true) return true;
    throw new Error(typeof verdict === 'string' ? verdict : `HTTP ${res.status}`);
  };
}

/** Ready when a TCP connection to host:port is accepted (and closed again at once). */
export function tcpProbe(host: string, port: number, connectTimeoutMs = 1000): Probe<true> {
  return () =>
    new Promise((resolve, reject) => {
      const socket = new Socket();
      const done = (err?: Error): void => {
        socket.destroy();
        if (err === undefined) resolve(true);
        else reject(err);
      };
      socket.setTimeout(connectTimeoutMs, () => done(new Error(`connect to ${host}:${port} timed out`)));
      socket.once('error', done);
      socket.connect(port, host, () => done());
    });
}

/** Ready when a line seen so far matches; `lines` is the live buffer a process's output fills. */
export function lineProbe<T>(
  lines: () => readonly string[],
  match: (line: string) => T | undefined,
): Probe<T> {
  let from = 0;
  return () => {
    const all = lines();
    for (; from < all.length; from++) {
      const hit = match(all[from]!);
      if (hit !== undefined) return Promise.resolve(hit);
    }
    return Promise.resolve(undefined);
  };
}

/** Ready when a synchronous condition holds. */
export function predicateProbe(cond: () => boolean): Probe<true> {
  return () => Promise.resolve(cond() ? true : undefined);
}
