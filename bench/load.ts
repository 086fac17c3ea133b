// A small closed-loop HTTP load generator for benchmarks: `concurrency` clients each send
// the next request as soon as the previous one is answered, for `durationMs`.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface LoadResult {
  requests: number;
  errors: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export async function closedLoop(
  send: () => Promise<boolean>,
  concurrency: number,
  durationMs: number,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const ok = await send().catch(() => false);
        if (ok) latencies.push(performance.now() - t);
        else errors++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number): number =>
    latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return {
    requests: latencies.length,
    errors,
    perSecond: latencies.length / elapsed,
    p50Ms: q(0.5),
    p99Ms: q(0.99),
  };
}

export interface WarmUp {
  /** How long the load ran before the rate settled (or the bound). */
  ms: number;
  /** Calls/s in the first window: the system as started, before the JIT has optimised it. */
  coldPerSecond: number;
  /** Calls/s in the last window. */
  settledPerSecond: number;
  settled: boolean;
}

/**
 * Runs the same closed loop, unmeasured, until the rate settles: two windows in a row within
 * `tolerance` of the one before them (bounded by `maxMs`). A Node service runs its first
 * thousands of calls in the interpreter and baseline tiers; a figure read then measures the
 * JIT's warm-up, not the service. Every system a figure compares warms up the same way.
 */
export async function warmUp(
  send: () => Promise<boolean>,
  concurrency: number,
  { windowMs = 1000, maxMs = 20_000, tolerance = 0.05 } = {},
): Promise<WarmUp> {
  const rates: number[] = [];
  const start = performance.now();
  for (;;) {
    rates.push((await closedLoop(send, concurrency, windowMs)).perSecond);
    const ms = performance.now() - start;
    const n = rates.length;
    const close = (a: number, b: number): boolean => Math.abs(a - b) <= tolerance * Math.max(a, b);
    const settled = n >= 3 && close(rates[n - 1]!, rates[n - 2]!) && close(rates[n - 2]!, rates[n - 3]!);
    if (settled || ms >= maxMs)
      return { ms, coldPerSecond: rates[0]!, settledPerSecond: rates[n - 1]!, settled };
  }
}

export function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** One process's pages from /proc/<pid>/smaps_rollup, in MiB (undefined once it is gone). */
function pagesMiB(pid: number): { rss: number; private: number; shared: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field: string): number =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
    return {
      rss: kb('Rss') / 1024,
      private: (kb('Private_Clean') + kb('Private_Dirty')) / 1024,
      shared: (kb('Shared_Clean') + kb('Shared_Dirty')) / 1024,
    };
  } catch {
    return undefined;
  }
}

/**
 * The memory a group of processes holds, from one read of each one's pages: `resident` is
 * each one's private pages plus the pages they share counted once; `rssSum` the sum of their
 * RSS, which counts the shared pages (Node's own binary and libraries, ~43 MiB here, mapped
 * by every one of them) once per process. The shared pages are file pages of the same files
 * in every service (spawned, not forked), so the largest process's share stands for all.
 */
export function groupMemoryMiB(pids: readonly number[]): { resident: number; rssSum: number } {
  let priv = 0;
  let shared = 0;
  let rssSum = 0;
  for (const pid of pids) {
    const p = pagesMiB(pid);
    if (p === undefined) continue;
    priv += p.private;
    shared = Math.max(shared, p.shared);
    rssSum += p.rss;
  }
  return { resident: priv + shared, rssSum };
}

/** CPU ms used so far by a process (Linux /proc; 0 where there is none). */
export function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, USER_HZ 100
  } catch {
    return 0;
  }
}

/** CPU ms this process has used so far. */
export function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export function fmt(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

/**
 * `n` bare Node processes (`node -e 0`) started side by side, in ms until the last has exited:
 * the floor under any topology's start-up on this machine at this moment (its phase moves it).
 */
export async function bareNodesMs(n: number): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((resolve, reject) => {
          const c = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
          c.on('error', reject);
          c.on('exit', () => resolve());
        }),
    ),
  );
  return performance.now() - t0;
}
