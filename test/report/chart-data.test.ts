import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildCharts,
  histogramQuantile,
  scrapeIntervalMs,
  type ChartSpec,
} from '../../src/report/chart-data.js';
import type { RunData, SeriesSample } from '../../src/run-data/run-data.js';

function runWith(series: SeriesSample[], deadlineMs = 2000): RunData {
  return {
    suite: 's',
    target: 'reference',
    seed: 1,
    phases: { startedAtWall: '2026-11-30T12:00:00.000Z', deadlineMs },
    history: [],
    series,
    faults: [],
  };
}

const at = (service: string, name: string, labels: Record<string, string>, points: [number, number][]) =>
  points.map(([tMs, value]): SeriesSample => ({ service, name, labels, tMs, value }));

/** Every 250 ms from 250 to `toMs`, so the service counts as scraped from 250 ms on. */
const heartbeat = (service: string, toMs: number): SeriesSample[] =>
  at(
    service,
    'limbo_workload_pending',
    {},
    Array.from({ length: toMs / 250 }, (_, i): [number, number] => [(i + 1) * 250, 0]),
  );

function line(charts: ChartSpec[], id: string, label: string): (number | null)[] {
  const chart = charts.find((c) => c.id === id);
  assert.ok(chart, `no chart ${id}`);
  const l = chart.lines.find((x) => x.label === label);
  assert.ok(l, `no line ${label} in ${id}: ${chart.lines.map((x) => x.label).join(', ')}`);
  return l.values;
}

test('the grid step is the median scrape interval; x is seconds from run start', () => {
  const series = [
    ...heartbeat('ingress-1', 2000),
    ...at('runner', 'limbo_workload_pending', {}, [[1000, 1]]),
  ];
  assert.equal(scrapeIntervalMs(series), 250);
  const charts = buildCharts(runWith(series));
  assert.deepEqual(charts[0]?.x.slice(0, 4), [0, 0.25, 0.5, 0.75]);
  assert.equal(charts[0]?.x.at(-1), 2);
});

test('counters become per-second increases; a drop is a reset; a late label set counts its first value', () => {
  const series = [
    ...heartbeat('ingress-1', 2000),
    ...at('ingress-1', 'limbo_ingress_resends_total', { partition: '0', reason: 'timeout' }, [
      [250, 0],
      [500, 5],
      [750, 5],
      [1000, 2], // restarted: 2 new resends since
      [1250, 4],
    ]),
    // first exposed at 1500 with 3: three resends happened in (1250, 1500]
    ...at('ingress-1', 'limbo_ingress_resends_total', { partition: '1', reason: 'not_leader' }, [
      [1500, 3],
      [1750, 3],
    ]),
  ];
  const charts = buildCharts(runWith(series));
  // slots: 0 s, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2 — values in resends/s (×4)
  assert.deepEqual(line(charts, 'resends', 'timeout'), [null, 0, 20, 0, 8, 8, null, null, null]);
  assert.deepEqual(line(charts, 'resends', 'not_leader'), [null, 0, 0, 0, 0, 0, 12, 0, null]);
});

test('gauges hold their last value for a second, then go null while the service is not scraped', () => {
  const series = [
    ...heartbeat('runner', 4000),
    ...at('ingress-1', 'limbo_ingress_pending_requests', { kind: 'call' }, [
      [250, 1],
      [500, 3],
      [3500, 2],
    ]),
    ...at('ingress-1', 'limbo_ingress_pending_requests', { kind: 'send' }, [[500, 10]]),
  ];
  const values = line(buildCharts(runWith(series, 4000)), 'pending', 'call');
  // 0.5 s → 3, held through 1.5 s (4 slots), null until 3.5 s
  assert.deepEqual(values.slice(0, 9), [null, 1, 3, 3, 3, 3, 3, null, null]);
  assert.equal(values[14], 2);
  assert.equal(values[13], null);
});

test('oldest pending age takes the max per service, pending sums across services', () => {
  const series = [
    ...at('ingress-1', 'limbo_ingress_oldest_pending_seconds', {}, [[250, 4]]),
    ...at('ingress-2', 'limbo_ingress_oldest_pending_seconds', {}, [[250, 1]]),
    ...at('ingress-1', 'limbo_ingress_pending_requests', { kind: 'call' }, [[250, 4]]),
    ...at('ingress-2', 'limbo_ingress_pending_requests', { kind: 'call' }, [[250, 1]]),
  ];
  const charts = buildCharts(runWith(series, 500));
  assert.equal(line(charts, 'oldest-pending', 'ingress-1')[1], 4);
  assert.equal(line(charts, 'oldest-pending', 'ingress-2')[1], 1);
  assert.equal(line(charts, 'pending', 'call')[1], 5);
});

test('histogram_quantile interpolates inside a bucket and answers the top finite bound for +Inf', () => {
  const bounds = [0.1, 0.5, 1, Infinity];
  const counts = [10, 50, 90, 100];
  assert.equal(histogramQuantile(0.5, bounds, counts), 0.5);
  assert.equal(histogramQuantile(0.25, bounds, counts), 0.25);
  assert.equal(histogramQuantile(0.99, bounds, counts), 1);
  assert.equal(histogramQuantile(0.05, bounds, counts), 0.05);
  assert.equal(histogramQuantile(0.5, bounds, [0, 0, 0, 0]), undefined);
});

test('latency: p50 / p99 / mean per interval from bucket increases summed across services', () => {
  const name = 'limbo_ingress_request_duration_seconds';
  const hist = (
    service: string,
    counts: [number, number, number],
    sum: number,
    later: [number, number, number],
    laterSum: number,
  ) => [
    ...['0.01', '0.1', '+Inf'].flatMap((le, i) =>
      at(service, `${name}_bucket`, { kind: 'call', outcome: 'ok', le }, [
        [250, counts[i] as number],
        [500, later[i] as number],
      ]),
    ),
    ...at(service, `${name}_sum`, { kind: 'call', outcome: 'ok' }, [
      [250, sum],
      [500, laterSum],
    ]),
    ...at(service, `${name}_count`, { kind: 'call', outcome: 'ok' }, [
      [250, counts[2]],
      [500, later[2]],
    ]),
  ];
  // in (250, 500]: ingress-1 saw 10 fast (≤ 10 ms), ingress-2 saw 10 in (10 ms, 100 ms]
  const series = [
    ...hist('ingress-1', [5, 5, 5], 0.01, [15, 15, 15], 0.06),
    ...hist('ingress-2', [0, 0, 0], 0, [0, 10, 10], 0.5),
  ];
  const charts = buildCharts(runWith(series, 500));
  assert.equal(line(charts, 'latency', 'p50')[2], 10);
  assert.equal(line(charts, 'latency', 'p99')[2], 98.2);
  assert.equal(line(charts, 'latency', 'mean')[2], 27.5);
  assert.equal(
    line(charts, 'latency', 'p50')[1],
    null,
    'no earlier sample: no increase in the first interval',
  );
});

test('grid points and lines per chart are bounded', () => {
  const reasons = Array.from({ length: 12 }, (_, i) => `r${String(i).padStart(2, '0')}`);
  const series = reasons.flatMap((reason, i) =>
    at('ingress-1', 'limbo_ingress_resends_total', { partition: '0', reason }, [
      [250, 0],
      [3_600_000, i + 1],
    ]),
  );
  const charts = buildCharts(runWith(series, 3_600_000), { maxPoints: 500, maxLines: 8 });
  const resends = charts.find((c) => c.id === 'resends');
  assert.ok(resends !== undefined && resends.x.length <= 500, `${resends?.x.length} points`);
  assert.equal(resends.lines.length, 8);
  assert.ok(resends.lines.some((l) => l.label === 'other (5)'));
  // the biggest movers keep their own line
  assert.ok(resends.lines.some((l) => l.label === 'r11'));
  assert.ok(!resends.lines.some((l) => l.label === 'r00'));
});

test('a run with no samples gives every chart and no lines', () => {
  const charts = buildCharts(runWith([]));
  assert.equal(charts.length, 7);
  assert.ok(charts.every((c) => c.lines.length === 0));
});
