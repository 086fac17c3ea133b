// The one place a declared service's readiness is waited for: an HTTP answer, a TCP connect,
// or a line of its output. Probes repeat every 100 ms, each bounded, until the signal given
// aborts (the process's start bound, or its exit); nothing here loops without a bound.
//
//   http  ─ GET/POST url ─▶ status (2xx or the one asked) + body contains … ─▶ ready
//   tcp   ─ connect host:port ───────────────────────────────────────────────▶ ready
//   logLine ─ matchReady(line) on the process's stdout/stderr ──────────────▶ ready
import { connect } from 'node:net';
import type { ReadyInfo } from '../../util/ready.js';
import type { WaitStrategy } from './declaration.js';

const PROBE_EVERY_MS = 100;
const PROBE_TIMEOUT_MS = 1500;

export interface Waiting {
  /** For startProcess: matches a ready line (log-line strategies), else undefined. */
  matchReady?: (line: string) => ReadyInfo | undefined;
  /** For startProcess: resolves once ready (HTTP and TCP strategies), else undefined. */
  waitReady?: (signal: AbortSignal) => Promise<ReadyInfo>;
  /** What is waited for, for messages. */
  describe: string;
}

/** The strategy with its templates already filled in. */
export function waitingFor(strategy: WaitStrategy, info: Omit<ReadyInfo, 'pid'>): Waiting {
  const ready = (): ReadyInfo => ({ ...info, pid: 0 });
  if ('logLine' in strategy) {
    const re = new RegExp(strategy.logLine);
    return {
      matchReady: (line) => (re.test(line) ? ready() : undefined),
      describe: `a line matching /${strategy.logLine}/`,
    };
  }
  const probe = 'tcp' in strategy ? () => tcpOpen(strategy.tcp) : () => httpAnswers(strategy);
  return {
    waitReady: async (signal) => {
      while (!signal.aborted) {
        if (await probe()) return ready();
        await sleep(PROBE_EVERY_MS, signal);
      }
      throw new Error('aborted');
    },
    describe: 'tcp' in strategy ? `a TCP connect to ${strategy.tcp}` : `an answer from ${strategy.http}`,
  };
}

/** Waits until `strategy` holds or `timeoutMs` passes (for probes not tied to one process). */
export async function waitUntil(strategy: WaitStrategy, timeoutMs: number): Promise<boolean> {
  const w = waitingFor(strategy, { role: '', node: '', addresses: {} });
  if (w.waitReady === undefined) throw new Error('a log-line wait needs a process');
  try {
    await w.waitReady(AbortSignal.timeout(timeoutMs));
    return true;
  } catch {
    return false;
  }
}

async function httpAnswers(s: Extract<WaitStrategy, { http: string }>): Promise<boolean> {
  try {
    const res = await fetch(s.http, {
      method: s.method ?? (s.body !== undefined ? 'POST' : 'GET'),
      ...(s.body !== undefined
        ? { body: JSON.stringify(s.body), headers: { 'content-type': 'application/json' } }
        : {}),
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    const text = await res.text();
    const statusOk = s.status !== undefined ? res.status === s.status : res.status >= 200 && res.status < 300;
    return statusOk && (s.bodyIncludes === undefined || text.includes(s.bodyIncludes));
  } catch {
    return false;
  }
}

function tcpOpen(hostPort: string): Promise<boolean> {
  const i = hostPort.lastIndexOf(':');
  const host = hostPort.slice(0, i) || '127.0.0.1';
  const port = Number(hostPort.slice(i + 1));
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
