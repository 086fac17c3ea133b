// A declared service's readiness (`ready: { http } | { tcp } | { logLine }`) as the testbed's
// one wait (src/util/wait.ts): HTTP and TCP become probes polled by waitFor, bounded by the
// process's start bound and given up when it exits; a log line is startProcess's own line
// match. No loop of its own here.
//
//   { http }    ─ httpProbe(url, accept: status + bodyIncludes) ─┐
//   { tcp }     ─ tcpProbe(host, port) ─────────────────────────┴▶ waitFor ─▶ ready
//   { logLine } ─ matchReady(line) on the process's output ─────────────────▶ ready
import type { ReadyInfo } from '../../launch/ready.js';
import { httpProbe, tcpProbe, waitFor, type Probe } from '../../util/wait.js';
import type { WaitStrategy } from './declaration.js';

export interface Waiting {
  /** For startProcess: matches a ready line (log-line strategies), else undefined. */
  matchReady?: (line: string) => ReadyInfo | undefined;
  /** For startProcess: resolves once ready (HTTP and TCP strategies), else undefined. */
  waitReady?: (signal: AbortSignal) => Promise<ReadyInfo>;
  /** What is waited for, for messages. */
  describe: string;
}

/** The strategy (its templates already filled in) for one process, bounded by `timeoutMs`. */
export function waitingFor(strategy: WaitStrategy, info: Omit<ReadyInfo, 'pid'>, timeoutMs: number): Waiting {
  const ready = (): ReadyInfo => ({ ...info, pid: 0 });
  if ('logLine' in strategy) {
    const re = new RegExp(strategy.logLine);
    return {
      matchReady: (line) => (re.test(line) ? ready() : undefined),
      describe: `a line matching /${strategy.logLine}/`,
    };
  }
  const describe = 'tcp' in strategy ? `a TCP connect to ${strategy.tcp}` : `an answer from ${strategy.http}`;
  const probe = probeOf(strategy);
  return {
    waitReady: (signal) => waitFor(probe, { what: describe, timeoutMs, signal }).then(ready),
    describe,
  };
}

function probeOf(s: Exclude<WaitStrategy, { logLine: string }>): Probe<true> {
  if ('tcp' in s) {
    const i = s.tcp.lastIndexOf(':');
    return tcpProbe(s.tcp.slice(0, i) || '127.0.0.1', Number(s.tcp.slice(i + 1)));
  }
  return httpProbe(s.http, {
    method: s.method ?? (s.body !== undefined ? 'POST' : 'GET'),
    ...(s.body !== undefined
      ? { body: JSON.stringify(s.body), headers: { 'content-type': 'application/json' } }
      : {}),
    accept: (status, body) => {
      const statusOk = s.status !== undefined ? status === s.status : status >= 200 && status < 300;
      if (!statusOk) return `HTTP ${status}`;
      return s.bodyIncludes === undefined || body.includes(s.bodyIncludes)
        ? true
        : `no ${s.bodyIncludes} in the answer`;
    },
  });
}
