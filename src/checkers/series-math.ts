// Helpers over scraped series for checkers: grouping samples into series and the increase of a
// counter over a time range (resets, e.g. after a restart, count from zero like PromQL's).
import { processStartMetric } from '../protocol/names.js';
import type { SeriesSample } from '../run-data/run-data.js';

export function seriesKey(s: Pick<SeriesSample, 'service' | 'name' | 'labels'>): string {
  const labels = Object.keys(s.labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(s.labels[k])}`)
    .join(',');
  return `${s.service}|${s.name}{${labels}}`;
}

/** Samples of the named metrics grouped per series, each group sorted by time. */
export function groupSeries(
  samples: readonly SeriesSample[],
  names: readonly string[],
): Map<string, SeriesSample[]> {
  const groups = new Map<string, SeriesSample[]>();
  for (const s of samples) {
    if (!names.includes(s.name)) continue;
    const key = seriesKey(s);
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = []));
    g.push(s);
  }
  for (const g of groups.values()) g.sort((a, b) => a.tMs - b.tMs);
  return groups;
}

/**
 * When each service came back as a new process: the times of the samples where its
 * `process_start_time_seconds` differs from the one before. A counter of the new process
 * starts again from zero even where its first value is not below the old one's last.
 */
export function restartsOf(samples: readonly SeriesSample[]): Map<string, number[]> {
  const starts = new Map<string, SeriesSample[]>();
  for (const s of samples) {
    if (s.name !== processStartMetric) continue;
    let g = starts.get(s.service);
    if (g === undefined) starts.set(s.service, (g = []));
    g.push(s);
  }
  const restarts = new Map<string, number[]>();
  for (const [service, g] of starts) {
    g.sort((a, b) => a.tMs - b.tMs);
    const times: number[] = [];
    for (let i = 1; i < g.length; i++) if (g[i]!.value !== g[i - 1]!.value) times.push(g[i]!.tMs);
    if (times.length > 0) restarts.set(service, times);
  }
  return restarts;
}

/**
 * The increase of one counter series over [fromMs, toMs]: from the last sample at or before
 * fromMs (or the first one inside the range) to the last one inside it; a drop is a reset and
 * the new value counts from zero, as does the first value after one of `restartsMs` (the
 * service's restarts, from restartsOf). Undefined if the range holds no sample.
 */
export function counterIncrease(
  sorted: readonly SeriesSample[],
  fromMs: number,
  toMs: number,
  restartsMs: readonly number[] = [],
): number | undefined {
  let prev: SeriesSample | undefined;
  let total = 0;
  let sawInside = false;
  for (const s of sorted) {
    if (s.tMs <= fromMs) {
      prev = s;
      continue;
    }
    if (s.tMs > toMs) break;
    sawInside = true;
    if (prev !== undefined) {
      const before = prev.tMs;
      const restarted = restartsMs.some((t) => t > before && t <= s.tMs);
      total += !restarted && s.value >= prev.value ? s.value - prev.value : s.value;
    }
    prev = s;
  }
  return sawInside ? total : undefined;
}

/** The summed increase of every series of the named counters over a range. */
export function totalIncrease(
  grouped: ReadonlyMap<string, readonly SeriesSample[]>,
  fromMs: number,
  toMs: number,
  restarts: ReadonlyMap<string, readonly number[]> = new Map(),
): { increase: number; seriesSeen: number; evidence: SeriesSample[] } {
  let increase = 0;
  let seriesSeen = 0;
  const evidence: SeriesSample[] = [];
  for (const g of grouped.values()) {
    const inc = counterIncrease(g, fromMs, toMs, restarts.get(g[0]?.service ?? ''));
    if (inc === undefined) continue;
    seriesSeen++;
    increase += inc;
    if (inc > 0) evidence.push(...g.filter((s) => s.tMs >= fromMs && s.tMs <= toMs).slice(0, 20));
  }
  return { increase, seriesSeen, evidence };
}

/**
 * What the scrapes held when a check found no sample of `names` where it looked, for its
 * inconclusive summary: when their samples are, else how many samples of other metrics and
 * from which services, else that nothing was scraped.
 */
export function scrapedInstead(samples: readonly SeriesSample[], names: readonly string[], max = 6): string {
  if (samples.length === 0) return 'the run has no metric samples at all: nothing was scraped';
  const own = samples.filter((s) => names.includes(s.name));
  if (own.length > 0) {
    const times = own.map((s) => s.tMs);
    return `${names.length === 1 ? 'its' : 'their'} ${own.length} samples lie between ${Math.round(Math.min(...times))} and ${Math.round(Math.max(...times))} ms`;
  }
  const services = [...new Set(samples.map((s) => s.service))].sort();
  const shown =
    services.slice(0, max).join(', ') + (services.length > max ? ` and ${services.length - max} more` : '');
  return `the scrapes hold ${samples.length} samples of other metrics, from ${shown}`;
}
