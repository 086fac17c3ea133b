// Helpers over scraped series for checkers: grouping samples into series and the increase of a
// counter over a time range (resets, e.g. after a restart, count from zero like PromQL's).
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
 * The increase of one counter series over [fromMs, toMs]: from the last sample at or before
 * fromMs (or the first one inside the range) to the last one inside it; a drop is a reset and
 * the new value counts from zero. Undefined if the range holds no sample.
 */
export function counterIncrease(
  sorted: readonly SeriesSample[],
  fromMs: number,
  toMs: number,
): number | undefined {
  let prev: number | undefined;
  let total = 0;
  let sawInside = false;
  for (const s of sorted) {
    if (s.tMs <= fromMs) {
      prev = s.value;
      continue;
    }
    if (s.tMs > toMs) break;
    sawInside = true;
    if (prev !== undefined) total += s.value >= prev ? s.value - prev : s.value;
    prev = s.value;
  }
  return sawInside ? total : undefined;
}

/** The summed increase of every series of the named counters over a range. */
export function totalIncrease(
  grouped: ReadonlyMap<string, readonly SeriesSample[]>,
  fromMs: number,
  toMs: number,
): { increase: number; seriesSeen: number; evidence: SeriesSample[] } {
  let increase = 0;
  let seriesSeen = 0;
  const evidence: SeriesSample[] = [];
  for (const g of grouped.values()) {
    const inc = counterIncrease(g, fromMs, toMs);
    if (inc === undefined) continue;
    seriesSeen++;
    increase += inc;
    if (inc > 0) evidence.push(...g.filter((s) => s.tMs >= fromMs && s.tMs <= toMs).slice(0, 20));
  }
  return { increase, seriesSeen, evidence };
}
