// A small closed-loop HTTP load generator for benchmarks: `concurrency` clients each send
// the next request as soon as the previous one is answered, for `durationMs`.
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

export function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

export function fmt(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}
