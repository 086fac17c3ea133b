// The dashboards and alert rules against real runs: a short suite (a leader killed with
// calls in flight, restarted on a new metrics port) runs on `reference` and on
// `reference:legacy` with the run's own Prometheus, alerts.yml loaded. Before that
// Prometheus stops, every panel and annotation query of every dashboard must return data
// over the run, every alert rule must evaluate cleanly, and the hanging alert must fire on
// legacy (its hung clients outlive the rule's 30 s + `for: 10s`) and never even go pending
// on reference. The suite's own PromQL assertions are checked on both runs as well.
//
// Skips only when prometheus is not installed, and never when LIMBO_PROMETHEUS_REQUIRED=1
// (CI sets it): then a missing binary is a failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noClientLeftHanging } from '../../src/checkers/no-client-left-hanging.js';
import { promql } from '../../src/checkers/promql.js';
import { alertRulesFile } from '../../src/cli/run-prometheus-choice.js';
import { kill } from '../../src/faults/process-faults.js';
import { at } from '../../src/faults/schedule.js';
import { leaderOf } from '../../src/faults/selectors.js';
import { metricNames as m } from '../../src/protocol/names.js';
import type { RunData } from '../../src/run-data/run-data.js';
import { runSuite } from '../../src/runner/run-suite.js';
import { defineSuite } from '../../src/runner/suite.js';
import { createTarget } from '../../src/targets/registry.js';
import { prometheusAvailable, type StartedPrometheus } from '../../src/observe/prometheus-server.js';
import { dashboardExpressions, interpolate } from '../../dashboards/src/generate.js';

const required = process.env.LIMBO_PROMETHEUS_REQUIRED === '1';
const available = prometheusAvailable();
const skip =
  available || required
    ? false
    : 'prometheus is not installed (apt-get install --no-install-recommends prometheus)';

const HANGING_ALERT = 'LimboClientLeftHanging';
const pendingQuery = `sum({__name__=~"${m.ingressPendingRequests}|${m.processorPendingRpcs}"})`;

const suite = defineSuite({
  name: 'dashboards-proof',
  why: 'Fill every dashboard panel and alert rule from a real run: a leader dies with calls in flight and comes back on a new metrics port.',
  topology: { processors: 2, partitions: 2 },
  // Clients wait longer than the hanging alert needs (30 s + for 10 s), so legacy's hung
  // calls stay pending on the ingress until the deadline.
  workload: { concurrency: 8, opTimeoutMs: 120_000 },
  warmup: '3s',
  schedule: [at('2s', kill(leaderOf({ partition: 0 })), { for: '2s' })],
  // A few seconds after the restart, so Prometheus scrapes the restarted leader on its new port.
  chaos: '7s',
  // Reference drains in a second; legacy's hung calls hold the converge phase to its bound.
  converge: '52s',
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 5000 }),
    promql({ name: 'pendingDrainsPerPrometheus', query: pendingQuery, expect: { max: 0 } }),
    // The killed leader came back on a new port and Prometheus followed it (file_sd).
    promql({
      name: 'restartFollowed',
      query: `max(count by (service) (count by (service, instance) (count_over_time(${m.processorAppliedLsn}[10m]))))`,
      expect: { min: 2 },
    }),
    promql({ name: 'faultWindowScraped', query: `${m.faultActive} == 1`, expect: 'nonEmpty', at: 'range' }),
  ],
});

interface Observed {
  panels: { where: string; series: number; values: number; error?: string }[];
  rules: { name: string; health: string; lastError: string }[];
  hanging: { firing: number; any: number };
}

/** Everything the test asserts on, read from the run's Prometheus before it stops. */
async function observe(prom: StartedPrometheus, run: RunData): Promise<Observed> {
  const start = new Date(run.phases.startedAtWall);
  const end = new Date();
  const rangeS = Math.ceil((end.getTime() - start.getTime()) / 1000);
  const panels: Observed['panels'] = [];
  for (const e of dashboardExpressions()) {
    // Grafana's $__rate_interval at 1 s scrapes is 4 s; $__range is the whole run.
    const expr = interpolate(e.expr, { rateWindow: '4s', range: `${rangeS}s` });
    const where = `${e.dashboard} / ${e.panel} ${e.refId}`;
    try {
      const series = await prom.queryRange(expr, start, end, 1);
      const values = series.flatMap((s) => s.values.map(([, v]) => Number(v))).filter(Number.isFinite);
      panels.push({ where, series: series.length, values: values.length });
    } catch (err) {
      panels.push({ where, series: 0, values: 0, error: String(err) });
    }
  }
  const rules = (await prom.rules()).map((r) => ({ name: r.name, health: r.health, lastError: r.lastError }));
  // The rule evaluation's own record: Prometheus writes ALERTS{alertstate} while an alert is active.
  const count = async (promqlText: string): Promise<number> => {
    const data = await prom.query(promqlText, end);
    return data.resultType === 'vector' ? data.result.length : 0;
  };
  const hanging = {
    firing: await count(
      `max_over_time(ALERTS{alertname="${HANGING_ALERT}", alertstate="firing"}[${rangeS}s])`,
    ),
    any: await count(`max_over_time(ALERTS{alertname="${HANGING_ALERT}"}[${rangeS}s])`),
  };
  return { panels, rules, hanging };
}

async function runWithPrometheus(
  targetName: string,
): Promise<{ observed: Observed; run: RunData; verdict: string; checks: Map<string, string> }> {
  assert.ok(available, 'LIMBO_PROMETHEUS_REQUIRED=1 but there is no prometheus binary on PATH');
  const out = mkdtempSync(join(tmpdir(), 'limbo-dashboards-run-'));
  try {
    let observed: Observed | undefined;
    const res = await runSuite(suite, {
      target: createTarget(targetName),
      seed: 7,
      outRoot: out,
      replay: 'test',
      trace: false,
      prometheus: {
        rulesFiles: [alertRulesFile()],
        beforeStop: async (prom, run) => {
          observed = await observe(prom, run);
        },
      },
    });
    assert.ok(observed, 'observed before Prometheus stopped');
    assert.ok(res.verdict.prometheus?.url.startsWith('http://127.0.0.1:'), 'prometheus URL in verdict.json');
    assert.ok(existsSync(join(res.runDir, 'prometheus')), 'TSDB kept in the run directory');
    return {
      observed,
      run: res.run,
      verdict: res.verdict.verdict,
      checks: new Map(res.verdict.checks.map((c) => [c.name, `${c.verdict}: ${c.summary}`])),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function assertEveryPanelFilled(t: { diagnostic(msg: string): void }, observed: Observed): void {
  for (const p of observed.panels)
    t.diagnostic(
      `${p.values > 0 ? 'data' : 'NONE'} ${p.where} (${p.series} series, ${p.values} values)${p.error ? ` ${p.error}` : ''}`,
    );
  assert.ok(observed.panels.length >= 25, `${observed.panels.length} panel queries`);
  assert.deepEqual(
    observed.panels.filter((p) => p.values === 0).map((p) => `${p.where}${p.error ? `: ${p.error}` : ''}`),
    [],
    'every panel query returns data',
  );
  assert.ok(observed.rules.length >= 2, 'alerts.yml loaded');
  assert.deepEqual(
    observed.rules.filter((r) => r.health !== 'ok'),
    [],
    'every alert rule evaluates without error',
  );
}

test(
  'reference: every panel has data, every rule evaluates, the hanging alert stays silent',
  { skip },
  async (t) => {
    const started = Date.now();
    const { observed, checks, verdict } = await runWithPrometheus('reference');
    t.diagnostic(`run with Prometheus: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    for (const [name, c] of checks) t.diagnostic(`${name} ${c}`);
    assertEveryPanelFilled(t, observed);
    assert.deepEqual(observed.hanging, { firing: 0, any: 0 }, 'hanging alert never pending or firing');
    assert.match(checks.get('pendingDrainsPerPrometheus') ?? '', /^pass/);
    assert.match(checks.get('restartFollowed') ?? '', /^pass/);
    assert.match(checks.get('faultWindowScraped') ?? '', /^pass/);
    assert.equal(verdict, 'pass');
  },
);

test(
  'reference:legacy: every panel has data, every rule evaluates, the hanging alert fires',
  { skip },
  async (t) => {
    const started = Date.now();
    const { observed, checks, verdict } = await runWithPrometheus('reference:legacy');
    t.diagnostic(`run with Prometheus: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    for (const [name, c] of checks) t.diagnostic(`${name} ${c}`);
    assertEveryPanelFilled(t, observed);
    assert.ok(observed.hanging.firing >= 1, `${HANGING_ALERT} fired (${JSON.stringify(observed.hanging)})`);
    assert.match(checks.get('noClientLeftHanging') ?? '', /^fail/);
    assert.match(
      checks.get('pendingDrainsPerPrometheus') ?? '',
      /^fail/,
      'the PromQL assertion sees the hung calls',
    );
    assert.match(checks.get('restartFollowed') ?? '', /^pass/);
    assert.equal(verdict, 'fail');
  },
);
