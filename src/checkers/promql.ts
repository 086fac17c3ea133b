// PromQL assertions: a suite states what the run's Prometheus must show, e.g. "pending
// requests are back at 0 at the end", in the same language as the dashboards and alerts.
//
//   suite expect: promql({ query, expect, at }) ─▶ runner evaluates `query` against the run's
//   Prometheus before it stops (run.prometheus.evaluations) ─▶ check(run): pure comparison
//
// The checker stays pure: it declares its query (`Checker.promql`), the runner's Prometheus
// observer evaluates every declared query and stores the answers in the run data
// (run.prometheus.evaluations); the check reads only that.
// A run without Prometheus is inconclusive, with the reason; a query Prometheus rejects as bad
// PromQL is a fail (the suite is wrong); any other query error is inconclusive.
import type { PromqlEvaluation, PromqlQuery, RunData } from '../run-data/run-data.js';
import { UsageError } from '../util/errors.js';
import { result, type Checker, type CheckResult } from './checker.js';

/**
 * `empty`: no series (at any step of the range); `nonEmpty`: at least one value;
 * `{ max }` / `{ min }`: there is data and every value is within the bound (NaN never is).
 */
export type PromqlExpect =
  'empty' | 'nonEmpty' | { max: number; min?: number } | { min: number; max?: number };

export interface PromqlOptions {
  /** The check's name in verdicts and junit (default `promql <query>`). */
  name?: string;
  query: string;
  expect: PromqlExpect;
  /** `end`: one instant, the run's deadline (default); `range`: every 1 s step of the chaos start to the deadline. */
  at?: 'end' | 'range';
  /**
   * The canonical signals the query reads (default: every `limbo_*` metric it names); on a
   * target that lacks all of them (e.g. restate has no pending gauges) the check is skipped.
   */
  needs?: string[];
}

/** The limbo metrics a query names (histogram series folded to their metric). */
export function limboMetricsIn(query: string): string[] {
  const names = (query.match(/\blimbo_[a-z0-9_]+/g) ?? []).map((n) => n.replace(/_(bucket|sum|count)$/, ''));
  return [...new Set(names)];
}

export type { PromqlQuery };

const SHOWN_SERIES = 20;

/** The query a checker needs evaluated, or undefined for a checker that reads no PromQL. */
export function promqlQueryOf(checker: Checker): PromqlQuery | undefined {
  return checker.promql;
}

export function promql(options: PromqlOptions): Checker {
  if (typeof options?.query !== 'string' || options.query.trim() === '')
    throw new UsageError('promql: query must be a PromQL expression');
  const expect = options.expect;
  const validBound = (n: unknown): boolean =>
    n === undefined || (typeof n === 'number' && Number.isFinite(n));
  const valid =
    expect === 'empty' ||
    expect === 'nonEmpty' ||
    (typeof expect === 'object' &&
      expect !== null &&
      (expect.max !== undefined || expect.min !== undefined) &&
      validBound(expect.max) &&
      validBound(expect.min));
  if (!valid) throw new UsageError("promql: expect is 'empty', 'nonEmpty', { max: n } or { min: n }");
  if (options.at !== undefined && options.at !== 'end' && options.at !== 'range')
    throw new UsageError("promql: at is 'end' or 'range'");
  const q: PromqlQuery = { query: options.query, at: options.at ?? 'end' };
  const name = options.name ?? `promql ${options.query}`;
  const checker: Checker = {
    name,
    needs: options.needs ?? limboMetricsIn(options.query),
    promql: q,
    check: (run) => judge(name, q, expect, run),
  };
  return checker;
}

function describeExpect(expect: PromqlExpect): string {
  if (expect === 'empty' || expect === 'nonEmpty') return expect;
  return [
    expect.min !== undefined ? `>= ${expect.min}` : '',
    expect.max !== undefined ? `<= ${expect.max}` : '',
  ]
    .filter(Boolean)
    .join(' and ');
}

function judge(name: string, q: PromqlQuery, expect: PromqlExpect, run: RunData): CheckResult {
  const wanted = describeExpect(expect);
  const base = { query: q.query, at: q.at, expect: wanted };
  const prometheus = run.prometheus;
  if (prometheus?.url === undefined)
    return result(
      name,
      'inconclusive',
      `no Prometheus in this run: ${prometheus?.missing ?? 'not started'}`,
      {
        details: base,
      },
    );
  const e = prometheus.evaluations.find((x) => x.query === q.query && x.at === q.at);
  if (e === undefined)
    return result(name, 'inconclusive', 'the query was not evaluated before Prometheus stopped', {
      details: { ...base, prometheus: prometheus.url },
    });
  const details = {
    ...base,
    prometheus: prometheus.url,
    evaluated: e.at === 'end' ? e.endWall : `${e.startWall} .. ${e.endWall} every 1s`,
    ...(e.error !== undefined ? { error: e.error } : {}),
    seriesCount: e.series.length,
    series: e.series.slice(0, SHOWN_SERIES).map(summarizeSeries),
  };
  if (e.error !== undefined)
    return result(
      name,
      e.error.type === 'bad_data' ? 'fail' : 'inconclusive',
      `Prometheus could not evaluate ${q.query}: ${e.error.message}`,
      { details },
    );
  const values = e.series.flatMap((s) => s.values.map(([, v]) => v));
  const where = q.at === 'end' ? 'at the end' : 'during the run';
  if (expect === 'empty')
    return values.length === 0
      ? result(name, 'pass', `${q.query}: no series ${where}`, { details })
      : result(name, 'fail', `${q.query}: ${e.series.length} series ${where}, expected none`, { details });
  if (values.length === 0)
    return result(
      name,
      expect === 'nonEmpty' ? 'fail' : 'inconclusive',
      `${q.query}: no data ${where}${expect === 'nonEmpty' ? '' : `, nothing to compare with ${wanted}`}`,
      { details },
    );
  if (expect === 'nonEmpty')
    return result(name, 'pass', `${q.query}: ${e.series.length} series ${where}`, { details });
  const outside = (v: number): boolean =>
    Number.isNaN(v) ||
    (expect.max !== undefined && v > expect.max) ||
    (expect.min !== undefined && v < expect.min);
  const offending = e.series.filter((s) => s.values.some(([, v]) => outside(v)));
  if (offending.length === 0)
    return result(name, 'pass', `${q.query} ${wanted} ${where} (${range(values)})`, { details });
  return result(
    name,
    'fail',
    `${q.query} not ${wanted} ${where}: ${offending
      .slice(0, 5)
      .map((s) => `${labelsOf(s.metric)}=${range(s.values.map(([, v]) => v).filter(outside))}`)
      .join('; ')}`,
    { details: { ...details, offending: offending.slice(0, SHOWN_SERIES).map(summarizeSeries) } },
  );
}

function summarizeSeries(s: PromqlEvaluation['series'][number]): object {
  const vs = s.values.map(([, v]) => v);
  return {
    metric: s.metric,
    ...(s.values.length === 1
      ? { value: vs[0] }
      : { points: vs.length, min: minOf(vs), max: maxOf(vs), last: vs.at(-1) }),
  };
}

const minOf = (vs: number[]): number => vs.reduce((a, b) => Math.min(a, b), Infinity);
const maxOf = (vs: number[]): number => vs.reduce((a, b) => Math.max(a, b), -Infinity);

function range(vs: number[]): string {
  if (vs.some(Number.isNaN)) return 'NaN';
  const lo = minOf(vs);
  const hi = maxOf(vs);
  return lo === hi ? String(lo) : `${lo}..${hi}`;
}

function labelsOf(metric: Record<string, string>): string {
  const inner = Object.entries(metric)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  return `{${inner}}`;
}
