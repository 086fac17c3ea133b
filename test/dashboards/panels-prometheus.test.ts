// Every dashboard query and the alert rules, evaluated by a real Prometheus scraping a
// registry that carries the limbo metrics (the ingress's and processor's own metric
// factories, plus the log server's and the runner's series by their public names).
// Every expression must parse and evaluate; those whose metrics the registry exposes
// must return data. Skips (with a message) only when prometheus is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { metricNames as m } from '../../src/protocol/names.js';
import { createIngressMetrics } from '../../src/services/ingress/metrics.js';
import { createProcessorMetrics } from '../../src/services/processor/metrics.js';
import { createRegistry, startMetricsServer } from '../../src/telemetry/metrics.js';
import { prometheusAvailable, startPrometheus } from '../../src/observe/prometheus-server.js';
import {
  dashboardExpressions,
  dashboardsDir,
  interpolate,
  metricsRead,
} from '../../dashboards/src/generate.js';

const skip = prometheusAvailable()
  ? false
  : 'prometheus is not installed (apt-get install --no-install-recommends prometheus)';

const SCRAPE_MS = 500;

function ingressRegistry(oldestPendingSeconds: number): Registry {
  const registry = createRegistry({ service: 'ingress-1' });
  const x = createIngressMetrics(registry, () => oldestPendingSeconds);
  x.pending.set({ kind: 'call' }, 2);
  x.requests.inc({ kind: 'call', outcome: 'ok' }, 5);
  x.duration.observe({ kind: 'call', outcome: 'ok' }, 0.02);
  x.rpcAttempts.inc({ partition: '0', rpc: 'invoke', result: 'ok' });
  x.resends.inc({ partition: '0', reason: 'not_leader' });
  x.resending.set({ partition: '0' }, 1);
  x.resentRequests.inc({ partition: '0' });
  return registry;
}

function processorRegistry(): Registry {
  const registry = createRegistry({ service: 'processor-1' });
  const x = createProcessorMetrics(registry);
  x.isLeader.set({ partition: '0' }, 1);
  x.leaderEpoch.set({ partition: '0' }, 3);
  x.leadershipChanges.inc({ partition: '0', transition: 'became_leader' });
  x.pendingRpcs.set({ partition: '0' }, 1);
  x.rpcsFailed.inc({ partition: '0', reason: 'not_leader' });
  x.appliedLsn.set({ partition: '0' }, 42);
  x.staleProposalsDropped.inc({ partition: '0' });
  x.invocations.set({ partition: '0', status: 'invoked' }, 1);
  return registry;
}

/** The log server's and the runner's series, declared by their public names and labels. */
function logAndRunnerRegistry(): Registry {
  const registers = [createRegistry({ service: 'log-1' })];
  new Counter({ name: m.logAppendsTotal, help: 'appends', labelNames: ['partition'], registers }).inc(
    { partition: '0' },
    9,
  );
  new Histogram({ name: m.logAppendDurationSeconds, help: 'append latency', registers }).observe(0.003);
  new Counter({
    name: m.controllerLeaderChangesTotal,
    help: 'leader changes',
    labelNames: ['partition', 'reason'],
    registers,
  }).inc({ partition: '0', reason: 'startup' });
  new Gauge({ name: m.faultActive, help: 'fault', labelNames: ['fault', 'target'], registers }).set(
    { fault: 'partition', target: 'ingress-1->processor-1' },
    1,
  );
  new Gauge({ name: m.workloadPending, help: 'ops in flight', registers }).set(2);
  return registers[0]!;
}

test(
  'every dashboard query evaluates against a real Prometheus; those with series return data',
  { skip },
  async (t) => {
    const registries = [ingressRegistry(0), processorRegistry(), logAndRunnerRegistry()];
    const servers = await Promise.all(registries.map((r) => startMetricsServer(r, '127.0.0.1', 0)));
    try {
      await using prom = await startPrometheus({
        targets: servers.map((s, i) => ({ job: ['ingress', 'processor', 'log'][i]!, url: s.url })),
        scrapeIntervalMs: SCRAPE_MS,
      });
      await prom.waitForTargetsUp(20_000);
      // rate() and increase() need two samples inside their window; histograms too.
      await prom.waitForData(`count_over_time(${m.logAppendsTotal}[1m]) >= 3`, 15_000);
      const exposed = new Set(registries.flatMap((r) => r.getMetricsAsArray().map((x) => x.name)));
      const rows: string[] = [];
      const failures: string[] = [];
      const expressions = dashboardExpressions();
      assert.ok(expressions.length >= 25);
      for (const e of expressions) {
        const promql = interpolate(e.expr, { rateWindow: '30s', range: '5m' });
        const where = `${e.dashboard} / ${e.panel} ${e.refId}`;
        let seriesCount: number;
        try {
          const data = await prom.query(promql);
          seriesCount = data.resultType === 'vector' || data.resultType === 'matrix' ? data.result.length : 1;
        } catch (err) {
          failures.push(`${where}: ${String(err)}\n  ${promql}`);
          continue;
        }
        const expectData = metricsRead(e.expr).every((n) => exposed.has(n));
        rows.push(`${seriesCount > 0 ? 'data' : 'none'} ${where}`);
        if (expectData && seriesCount === 0) failures.push(`${where}: no data\n  ${promql}`);
      }
      for (const row of rows) t.diagnostic(row);
      assert.deepEqual(failures, []);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  },
);

test(
  'the hanging alert goes pending on a real Prometheus when the oldest request is too old',
  { skip },
  async () => {
    const registry = ingressRegistry(120);
    const server = await startMetricsServer(registry, '127.0.0.1', 0);
    try {
      await using prom = await startPrometheus({
        targets: [{ job: 'ingress', url: server.url }],
        scrapeIntervalMs: SCRAPE_MS,
        rulesFiles: [join(dashboardsDir(), 'alerts.yml')],
      });
      await prom.waitForTargetsUp(20_000);
      const deadline = Date.now() + 20_000;
      let names: string[] = [];
      while (Date.now() < deadline) {
        names = (await prom.alerts())
          .filter((a) => a.state !== 'inactive')
          .map((a) => a.labels.alertname ?? '');
        if (names.includes('LimboClientLeftHanging')) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      // (LimboPendingNotDraining may go pending too: requests are pending and none finished.)
      assert.ok(
        names.includes('LimboClientLeftHanging'),
        `hanging alert pending or firing: ${names.join(',')}`,
      );
      const [alert] = (await prom.alerts()).filter((a) => a.labels.alertname === 'LimboClientLeftHanging');
      assert.equal(alert?.labels.service, 'ingress-1');
      assert.equal(alert?.labels.job, 'ingress');
    } finally {
      await server.stop();
    }
  },
);
