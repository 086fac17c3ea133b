// Turns the run's scraped samples into chart-ready columns for report.html: one shared time
// grid (the scrape interval), gauges summed or maxed across services, counters as increases
// per interval (resets count from zero, like PromQL; a labelled series that first shows up
// mid-run counts its first value, since prom-client only exposes a label set once it moved),
// and the latency histogram as p50 / p99 / mean per interval.
//
//   samples ─▶ group per series ─▶ sweep onto the grid ─▶ sum per line ─▶ ChartSpec{x, lines}
import { metricNames as M } from '../protocol/names.js';
import { runEndMs, type RunData, type SeriesSample } from '../run-data/run-data.js';

export interface ChartLine {
  label: string;
  /** One value per grid point; null where nothing was scraped (a dead or paused service). */
  values: (number | null)[];
}

export interface ChartSpec {
  id: string;
  title: string;
  /** What the y axis counts, e.g. `requests`, `resends/s`, `ms`. */
  unit: string;
  /** Grid times in seconds since run start. */
  x: number[];
  lines: ChartLine[];
  /** The metric(s) the chart reads, for the caption. */
  source: string;
}

export interface ChartOptions {
  /** Bound on grid points: a long run gets a coarser step. */
  maxPoints?: number;
  /** Bound on lines per chart: the rest are summed into `other`. */
  maxLines?: number;
}

interface Grid {
  startMs: number;
  stepMs: number;
  points: number;
}

type Series = { service: string; labels: Record<string, string>; samples: SeriesSample[] };

const DEFAULT_STEP_MS = 250;

export function buildCharts(run: RunData, options: ChartOptions = {}): ChartSpec[] {
  const maxPoints = options.maxPoints ?? 3000;
  const maxLines = options.maxLines ?? 8;
  const byName = groupByName(run.series);
  const grid = makeGrid(run, maxPoints);
  const x = Array.from({ length: grid.points }, (_, i) => (grid.startMs + i * grid.stepMs) / 1000);
  const firstScrape = firstScrapePerService(run.series);
  const of = (name: string): Series[] => byName.get(name) ?? [];
  const perSecond = 1000 / grid.stepMs;
  const chart = (
    id: string,
    title: string,
    unit: string,
    source: string,
    lines: Map<string, (number | null)[]>,
  ): ChartSpec => ({ id, title, unit, x, source, lines: capLines(lines, maxLines) });

  const resends = sumLines(
    of(M.ingressResendsTotal).map((s) => [
      s.labels.reason ?? '?',
      scale(counterIncreases(s, grid, firstScrape), perSecond),
    ]),
  );
  const attempts = sumLines(
    of(M.ingressRpcAttemptsTotal).map((s) => [
      s.labels.result ?? '?',
      scale(counterIncreases(s, grid, firstScrape), perSecond),
    ]),
  );
  const leadership = sumLines([
    ...of(M.processorLeadershipChangesTotal).map((s): [string, (number | null)[]] => [
      s.labels.transition ?? '?',
      counterIncreases(s, grid, firstScrape),
    ]),
    ...of(M.controllerLeaderChangesTotal).map((s): [string, (number | null)[]] => [
      `controller: ${s.labels.reason ?? '?'}`,
      counterIncreases(s, grid, firstScrape),
    ]),
  ]);
  for (const [k, v] of leadership) leadership.set(k, cumulative(v));

  return [
    chart(
      'pending',
      'Pending client requests (ingress)',
      'requests',
      M.ingressPendingRequests,
      sumLines(of(M.ingressPendingRequests).map((s) => [s.labels.kind ?? 'all', gaugeOnGrid(s, grid)])),
    ),
    chart(
      'oldest-pending',
      'Oldest pending request age',
      's',
      M.ingressOldestPendingSeconds,
      maxPerLabel(of(M.ingressOldestPendingSeconds).map((s) => [s.service, gaugeOnGrid(s, grid)])),
    ),
    chart('resends', 'Resends by reason', 'resends/s', M.ingressResendsTotal, resends),
    chart(
      'leadership',
      'Leadership changes (cumulative)',
      'changes',
      `${M.processorLeadershipChangesTotal}, ${M.controllerLeaderChangesTotal}`,
      leadership,
    ),
    chart('rpc-attempts', 'RPC attempts by result', 'attempts/s', M.ingressRpcAttemptsTotal, attempts),
    chart(
      'latency',
      'Request latency per scrape interval',
      'ms',
      M.ingressRequestDurationSeconds,
      latencyLines(byName, grid, firstScrape),
    ),
    chart(
      'workload-pending',
      'Client ops in flight (workload)',
      'ops',
      M.workloadPending,
      sumLines(of(M.workloadPending).map((s) => [s.service, gaugeOnGrid(s, grid)])),
    ),
  ];
}

// ------------------------------------------------------------------ grid

/**
 * The samples of each series, by metric name. A series is service + name + label set; the
 * scraper shares one labels object among a series' samples, so its key is worked out once
 * per labels object, not once per sample.
 */
function groupByName(samples: readonly SeriesSample[]): Map<string, Series[]> {
  const labelKeys = new WeakMap<Record<string, string>, string>();
  const labelKeyOf = (labels: Record<string, string>): string => {
    let key = labelKeys.get(labels);
    if (key === undefined) {
      key = '';
      for (const k of Object.keys(labels).sort()) key += `\u0000${k}\u0001${labels[k]}`;
      labelKeys.set(labels, key);
    }
    return key;
  };
  // name → service → label key → series
  const index = new Map<string, Map<string, Map<string, Series>>>();
  const byName = new Map<string, Series[]>();
  const all: Series[] = [];
  for (const s of samples) {
    let byService = index.get(s.name);
    if (byService === undefined) index.set(s.name, (byService = new Map<string, Map<string, Series>>()));
    let byLabels = byService.get(s.service);
    if (byLabels === undefined) byService.set(s.service, (byLabels = new Map<string, Series>()));
    const key = labelKeyOf(s.labels);
    let series = byLabels.get(key);
    if (series === undefined) {
      series = { service: s.service, labels: s.labels, samples: [] };
      byLabels.set(key, series);
      all.push(series);
      const list = byName.get(s.name) ?? [];
      list.push(series);
      byName.set(s.name, list);
    }
    series.samples.push(s);
  }
  for (const s of all) s.samples.sort((a, b) => a.tMs - b.tMs);
  return byName;
}

/** The median gap between a service's scrapes: what one grid step should be. */
export function scrapeIntervalMs(samples: readonly SeriesSample[]): number {
  const times = new Map<string, Set<number>>();
  for (const s of samples) {
    let set = times.get(s.service);
    if (set === undefined) times.set(s.service, (set = new Set()));
    set.add(s.tMs);
  }
  const gaps: number[] = [];
  for (const set of times.values()) {
    const sorted = [...set].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) gaps.push((sorted[i] as number) - (sorted[i - 1] as number));
  }
  if (gaps.length === 0) return DEFAULT_STEP_MS;
  gaps.sort((a, b) => a - b);
  return Math.max(10, gaps[Math.floor(gaps.length / 2)] as number);
}

function makeGrid(run: RunData, maxPoints: number): Grid {
  let endMs = runEndMs(run);
  for (const f of run.faults) endMs = Math.max(endMs, f.healedAtMs ?? f.injectedAtMs);
  let stepMs = scrapeIntervalMs(run.series);
  if (endMs / stepMs + 1 > maxPoints) stepMs = Math.ceil(endMs / (maxPoints - 1));
  return { startMs: 0, stepMs, points: Math.max(2, Math.ceil(endMs / stepMs) + 1) };
}

/** Grid index whose interval (t[i-1], t[i]] holds a sample at tMs. */
function slot(grid: Grid, tMs: number): number {
  return Math.min(grid.points - 1, Math.max(0, Math.ceil((tMs - grid.startMs) / grid.stepMs)));
}

function firstScrapePerService(samples: readonly SeriesSample[]): Map<string, number> {
  const first = new Map<string, number>();
  for (const s of samples) first.set(s.service, Math.min(first.get(s.service) ?? Infinity, s.tMs));
  return first;
}

// ------------------------------------------------------------------ per-series sweeps

/** A gauge on the grid: the last sample of each interval, held until the series goes stale. */
function gaugeOnGrid(series: Series, grid: Grid): (number | null)[] {
  const out: (number | null)[] = new Array<number | null>(grid.points).fill(null);
  const staleSlots = Math.max(3, Math.ceil(1000 / grid.stepMs));
  let lastSlot = -1;
  let lastValue = 0;
  const hold = (until: number): void => {
    for (let i = lastSlot + 1; i < until && i <= lastSlot + staleSlots; i++) out[i] = lastValue;
  };
  for (const s of series.samples) {
    if (!Number.isFinite(s.value)) continue;
    const i = slot(grid, s.tMs);
    if (lastSlot >= 0) hold(i);
    out[i] = s.value;
    lastSlot = i;
    lastValue = s.value;
  }
  if (lastSlot >= 0) hold(grid.points);
  return out;
}

/**
 * A counter's increase per grid interval: null before its first and after its last sample,
 * 0 in quiet intervals. A drop is a reset (the new value counts from zero); a series first seen
 * after its service's first scrape counts its first value as an increase.
 */
function counterIncreases(series: Series, grid: Grid, firstScrape: Map<string, number>): (number | null)[] {
  const out: (number | null)[] = new Array<number | null>(grid.points).fill(null);
  const first = series.samples[0];
  const last = series.samples[series.samples.length - 1];
  if (first === undefined || last === undefined) return out;
  const serviceFirstMs = firstScrape.get(series.service) ?? first.tMs;
  const appearedLate = first.tMs > serviceFirstMs;
  // A late label set was 0 (unexposed) while its service was already being scraped.
  for (let i = slot(grid, appearedLate ? serviceFirstMs : first.tMs); i <= slot(grid, last.tMs); i++)
    out[i] = 0;
  let prev: number | undefined = appearedLate ? 0 : undefined;
  for (const s of series.samples) {
    if (!Number.isFinite(s.value)) continue;
    if (prev !== undefined) {
      const i = slot(grid, s.tMs);
      out[i] = (out[i] ?? 0) + (s.value >= prev ? s.value - prev : s.value);
    }
    prev = s.value;
  }
  return out;
}

// ------------------------------------------------------------------ latency

function latencyLines(
  byName: Map<string, Series[]>,
  grid: Grid,
  firstScrape: Map<string, number>,
): Map<string, (number | null)[]> {
  const base = M.ingressRequestDurationSeconds;
  // Increase per interval of each bucket bound, summed across services, kinds and outcomes.
  const perLe = new Map<number, (number | null)[]>();
  for (const s of byName.get(`${base}_bucket`) ?? []) {
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    if (Number.isNaN(le)) continue;
    perLe.set(le, addInto(perLe.get(le), counterIncreases(s, grid, firstScrape)));
  }
  const sum = (name: string): (number | null)[] | undefined =>
    (byName.get(name) ?? []).reduce<(number | null)[] | undefined>(
      (acc, s) => addInto(acc, counterIncreases(s, grid, firstScrape)),
      undefined,
    );
  const sums = sum(`${base}_sum`);
  const counts = sum(`${base}_count`);
  const bounds = [...perLe.keys()].sort((a, b) => a - b);
  const p50: (number | null)[] = [];
  const p99: (number | null)[] = [];
  const mean: (number | null)[] = [];
  for (let i = 0; i < grid.points; i++) {
    const cumulativeCounts = bounds.map((le) => perLe.get(le)?.[i] ?? 0);
    p50.push(toMs(histogramQuantile(0.5, bounds, cumulativeCounts)));
    p99.push(toMs(histogramQuantile(0.99, bounds, cumulativeCounts)));
    const n = counts?.[i] ?? 0;
    mean.push(n > 0 ? toMs((sums?.[i] ?? 0) / n) : null);
  }
  const lines = new Map<string, (number | null)[]>();
  if (bounds.length > 0) lines.set('p50', p50).set('p99', p99);
  if (counts !== undefined) lines.set('mean', mean);
  return lines;
}

/**
 * PromQL's histogram_quantile over one interval: `counts` are cumulative per upper bound
 * (sorted, the last +Inf). Linear interpolation inside the bucket; the +Inf bucket answers
 * the highest finite bound. Undefined when the interval saw no observation.
 */
export function histogramQuantile(
  q: number,
  bounds: readonly number[],
  counts: readonly number[],
): number | undefined {
  const total = counts[counts.length - 1] ?? 0;
  if (total <= 0 || bounds.length === 0) return undefined;
  const rank = q * total;
  let i = counts.findIndex((c) => c >= rank);
  if (i < 0) i = counts.length - 1;
  const upper = bounds[i] as number;
  const lower = i > 0 ? (bounds[i - 1] as number) : 0;
  if (upper === Infinity) return lower;
  const below = i > 0 ? (counts[i - 1] as number) : 0;
  const inBucket = (counts[i] as number) - below;
  if (inBucket <= 0) return upper;
  return lower + (upper - lower) * ((rank - below) / inBucket);
}

function toMs(seconds: number | undefined): number | null {
  return seconds === undefined ? null : Math.round(seconds * 1e6) / 1e3;
}

// ------------------------------------------------------------------ combining lines

function addInto(acc: (number | null)[] | undefined, add: (number | null)[]): (number | null)[] {
  if (acc === undefined) return [...add];
  for (let i = 0; i < add.length; i++) {
    const v = add[i];
    if (v !== null && v !== undefined) acc[i] = (acc[i] ?? 0) + v;
  }
  return acc;
}

function sumLines(entries: [string, (number | null)[]][]): Map<string, (number | null)[]> {
  const out = new Map<string, (number | null)[]>();
  for (const [label, values] of entries) out.set(label, addInto(out.get(label), values));
  return out;
}

function maxPerLabel(entries: [string, (number | null)[]][]): Map<string, (number | null)[]> {
  const out = new Map<string, (number | null)[]>();
  for (const [label, values] of entries) {
    const acc = out.get(label);
    if (acc === undefined) out.set(label, [...values]);
    else
      values.forEach((v, i) => {
        if (v !== null) acc[i] = Math.max(acc[i] ?? -Infinity, v);
      });
  }
  return out;
}

function scale(values: (number | null)[], factor: number): (number | null)[] {
  return values.map((v) => (v === null ? null : v * factor));
}

function cumulative(values: (number | null)[]): (number | null)[] {
  let total = 0;
  return values.map((v) => {
    if (v === null) return null;
    total += v;
    return total;
  });
}

/** The `maxLines - 1` biggest lines by total, the rest summed into `other`; sorted by label. */
function capLines(lines: Map<string, (number | null)[]>, maxLines: number): ChartLine[] {
  const all = [...lines].map(([label, values]) => ({ label, values }));
  if (all.length > maxLines) {
    const weight = (l: ChartLine): number => l.values.reduce<number>((t, v) => t + Math.abs(v ?? 0), 0);
    all.sort((a, b) => weight(b) - weight(a));
    const rest = all.splice(maxLines - 1);
    all.push({
      label: `other (${rest.length})`,
      values: rest.reduce<(number | null)[] | undefined>((acc, l) => addInto(acc, l.values), undefined) ?? [],
    });
  }
  // Three decimals are plenty on a chart and keep the embedded JSON small.
  for (const l of all) l.values = l.values.map((v) => (v === null ? null : Math.round(v * 1000) / 1000));
  return all.sort((a, b) => a.label.localeCompare(b.label));
}
