// One Prometheus per run (`limbo run --prometheus`): it scrapes every service and the
// runner's /metrics at 1 s, follows services across restarts, loads the alert rules, and
// answers the suite's PromQL assertions before it stops.
//
//   testbed's scrape targets ─▶ targets() every 500 ms ─▶ changed? ─▶ setTargets (file_sd)
//                                                                       └▶ Prometheus
//   converge done ─▶ settle(): one scrape of every target after it ─▶ evaluate(queries)
//
// A restarted service comes back on a new metrics port; the watcher sees the new URL on its
// next tick and rewrites the targets file, so Prometheus follows it. Prometheus hands new
// targets to its scrapers on a fixed 5 s tick from its own start, so the runner starts it
// before the testbed (with no targets yet), and once the testbed is up writes them at once
// and waits for the first scrape (`firstScrape`) before the clients start: the ~5 s wait
// overlaps the topology's start-up instead of following it. The TSDB lives in
// `<runDir>/prometheus/` and is kept: `prometheus --storage.tsdb.path=<it>` reopens the run.
import { join } from 'node:path';
import type { PromqlQuery } from '../run-data/run-data.js';
import {
  PromQueryError,
  startPrometheus,
  type PrometheusTarget,
  type StartedPrometheus,
} from './prometheus-server.js';
import type { PromqlEvaluation, RunData } from '../run-data/run-data.js';
import type { Observer } from './observer.js';
import { messageOf } from '../util/errors.js';

export interface RunPrometheusOptions {
  runDir: string;
  /** The current scrape targets (asked again every `watchMs`). */
  targets: () => PrometheusTarget[];
  rulesFiles?: readonly string[];
  scrapeIntervalMs?: number;
  watchMs?: number;
  /** Bound on the wait for the first scrape of every target (firstScrape). */
  firstScrapeTimeoutMs?: number;
  log?: (line: string) => void;
  binary?: string;
}

export interface StartedRunPrometheus extends AsyncDisposable {
  readonly prometheus: StartedPrometheus;
  readonly url: string;
  readonly dataDir: string;
  /**
   * Resolves once every current target has been scraped (bounded; a timeout is logged, not
   * thrown), so the dashboards and assertions see the run from here on.
   */
  firstScrape(): Promise<void>;
  /** Waits (bounded) until every target has been scraped after now, so queries see the present. */
  settle(timeoutMs?: number): Promise<void>;
  /** Evaluates each query at `endMs` ('end') or every 1 s from `startMs` to `endMs` ('range'); never throws. */
  evaluate(queries: readonly PromqlQuery[], startMs: number, endMs: number): Promise<PromqlEvaluation[]>;
  stop(): Promise<void>;
}

export async function startRunPrometheus(options: RunPrometheusOptions): Promise<StartedRunPrometheus> {
  const log = options.log ?? (() => {});
  const scrapeIntervalMs = options.scrapeIntervalMs ?? 1000;
  const dataDir = join(options.runDir, 'prometheus');
  const initial = options.targets();
  const prometheus = await startPrometheus({
    targets: initial,
    scrapeIntervalMs,
    dataDir,
    rulesFiles: options.rulesFiles ?? [],
    ...(options.binary !== undefined ? { binary: options.binary } : {}),
  });
  let key = JSON.stringify(initial);
  let writing: Promise<void> | undefined;
  /** Rewrites the targets file if the targets changed since the last call. */
  const sync = (): Promise<void> => {
    if (writing !== undefined) return writing;
    const next = options.targets();
    const nextKey = JSON.stringify(next);
    if (nextKey === key) return Promise.resolve();
    key = nextKey;
    writing = prometheus
      .setTargets(next)
      .catch((err: unknown) => log(`prometheus: could not rewrite its targets: ${String(err)}`))
      .finally(() => (writing = undefined));
    return writing;
  };
  const watcher = setInterval(() => void sync(), options.watchMs ?? 500);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      clearInterval(watcher);
      await prometheus.stop();
    })());
  return {
    prometheus,
    url: prometheus.url,
    dataDir,
    async firstScrape() {
      await sync();
      await prometheus.waitForTargetsUp(options.firstScrapeTimeoutMs ?? 20_000).catch((err: unknown) => {
        log(`prometheus: ${messageOf(err)}`);
      });
    },
    async settle(timeoutMs = scrapeIntervalMs * 5) {
      await sync();
      await prometheus.waitForScrapesAfter(Date.now(), timeoutMs).catch((err: unknown) => {
        log(`prometheus: ${messageOf(err)}`);
      });
    },
    evaluate: (queries, startMs, endMs) =>
      Promise.all(queries.map((q) => evaluateOne(prometheus, q, startMs, endMs))),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/**
 * The run's Prometheus as a run observer: it settles (every target scraped after convergence),
 * evaluates the suite's PromQL queries at the deadline into run.prometheus.evaluations, and on
 * stop hands itself to `beforeStop` (tests, extra queries) first.
 */
export function prometheusObserver(
  prom: StartedRunPrometheus,
  queries: readonly PromqlQuery[],
  beforeStop?: (prometheus: StartedPrometheus, run: RunData) => Promise<void>,
): Observer {
  let seen: RunData | undefined;
  let stopped: Promise<void> | undefined;
  return {
    name: 'prometheus',
    settle: () => prom.settle(),
    async beforeAbort({ run, chaosStartEpochMs, deadlineEpochMs }) {
      seen = run;
      const evaluations = await prom.evaluate(queries, chaosStartEpochMs, deadlineEpochMs);
      if (run.prometheus !== undefined) run.prometheus.evaluations = evaluations;
    },
    stop: () =>
      (stopped ??= (async () => {
        if (beforeStop !== undefined && seen !== undefined) await beforeStop(prom.prometheus, seen);
        await prom.stop();
      })()),
  };
}

async function evaluateOne(
  prometheus: StartedPrometheus,
  q: PromqlQuery,
  startMs: number,
  endMs: number,
): Promise<PromqlEvaluation> {
  const base = {
    query: q.query,
    at: q.at,
    startWall: new Date(q.at === 'end' ? endMs : startMs).toISOString(),
    endWall: new Date(endMs).toISOString(),
  };
  try {
    if (q.at === 'range') {
      const series = await prometheus.queryRange(q.query, new Date(startMs), new Date(endMs), 1);
      return {
        ...base,
        series: series.map((s) => ({
          metric: s.metric,
          values: s.values.map(([t, v]): [number, number] => [t, Number(v)]),
        })),
      };
    }
    const data = await prometheus.query(q.query, new Date(endMs));
    const series: PromqlEvaluation['series'] =
      data.resultType === 'vector'
        ? data.result.map((s) => ({ metric: s.metric, values: [[s.value[0], Number(s.value[1])]] }))
        : data.resultType === 'matrix'
          ? data.result.map((s) => ({ metric: s.metric, values: s.values.map(([t, v]) => [t, Number(v)]) }))
          : data.resultType === 'scalar'
            ? [{ metric: {}, values: [[data.result[0], Number(data.result[1])]] }]
            : [];
    return { ...base, series };
  } catch (err) {
    const error =
      err instanceof PromQueryError
        ? { type: err.errorType, message: err.message }
        : { type: 'unavailable', message: messageOf(err) };
    return { ...base, series: [], error };
  }
}
