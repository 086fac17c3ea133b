// A real Prometheus scrapes a real metrics server and answers PromQL about it. Skips (with
// a message) only when the `prometheus` binary is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Counter, Gauge } from 'prom-client';
import { metricNames as m } from '../../src/protocol/names.js';
import { createRegistry, startMetricsServer } from '../../src/telemetry/metrics.js';
import {
  PromQueryError,
  fileSdGroups,
  prometheusAvailable,
  prometheusConfig,
  startPrometheus,
} from '../../src/observe/prometheus-server.js';

const skip = prometheusAvailable()
  ? false
  : 'prometheus is not installed (apt-get install --no-install-recommends prometheus)';

test('Prometheus scrapes a limbo registry and answers instant and range queries', { skip }, async () => {
  const registry = createRegistry({ service: 'ingress-1' });
  const pending = new Gauge({
    name: m.ingressPendingRequests,
    help: 'pending',
    labelNames: ['kind'],
    registers: [registry],
  });
  const requests = new Counter({
    name: m.ingressRequestsTotal,
    help: 'requests',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
  });
  pending.set({ kind: 'call' }, 3);
  requests.inc({ kind: 'call', outcome: 'ok' }, 7);
  const metrics = await startMetricsServer(registry, '127.0.0.1', 0);
  try {
    await using prom = await startPrometheus({
      targets: [{ job: 'ingress', url: metrics.url }],
      scrapeIntervalMs: 500,
    });
    assert.match(prom.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    await prom.waitForTargetsUp(20_000);
    const [sample] = await prom.waitForData(`${m.ingressPendingRequests}{kind="call"}`, 10_000);
    assert.ok(sample);
    assert.equal(sample.value[1], '3');
    assert.equal(sample.metric.service, 'ingress-1');
    assert.equal(sample.metric.job, 'ingress');
    assert.equal(sample.metric.kind, 'call');

    // Several scrapes of the first value, then a change that a later scrape sees.
    await prom.waitForData(`count_over_time(${m.ingressPendingRequests}{kind="call"}[1m]) >= 3`, 10_000);
    pending.set({ kind: 'call' }, 0);
    await prom.waitForData(`${m.ingressPendingRequests}{kind="call"} == 0`, 10_000);

    const total = await prom.query(`sum(${m.ingressRequestsTotal})`);
    assert.equal(total.resultType, 'vector');
    assert.equal(total.resultType === 'vector' && total.result[0]?.value[1], '7');

    const end = new Date();
    const series = await prom.queryRange(
      `${m.ingressPendingRequests}{kind="call"}`,
      new Date(end.getTime() - 30_000),
      end,
      0.25,
    );
    assert.equal(series.length, 1);
    const values = new Set(series[0]!.values.map(([, v]) => v));
    assert.ok(values.has('3') && values.has('0'), `both values over time: ${[...values].join(',')}`);

    await assert.rejects(prom.query('sum(('), (err: unknown) => {
      assert.ok(err instanceof PromQueryError);
      assert.equal(err.code, 'E_PROMQL');
      assert.equal(err.errorType, 'bad_data');
      return true;
    });
  } finally {
    await metrics.stop();
  }
});

test('stop ends the process by PID and removes its temp dir', { skip }, async () => {
  const prom = await startPrometheus({ targets: [], scrapeIntervalMs: 1000 });
  const procDir = `/proc/${prom.pid}`;
  assert.ok(existsSync(procDir));
  assert.ok(existsSync(prom.dataDir));
  await prom.stop();
  assert.equal(existsSync(procDir), false, 'process gone');
  assert.equal(existsSync(prom.dataDir), false, 'temp data dir removed');
  await prom.stop(); // idempotent
  await assert.rejects(prom.query('1'));
});

test('the generated config and targets file pass promtool check config', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-promconfig-'));
  try {
    writeFileSync(join(dir, 'rules.yml'), 'groups: []\n');
    const groups = fileSdGroups([
      { job: 'processor', url: 'http://127.0.0.1:9111/metrics' },
      { job: 'processor', url: 'http://127.0.0.1:9112/metrics', labels: { zone: 'a' } },
      { job: 'runner', url: 'https://127.0.0.1:9100/custom/path?x=1' },
    ]);
    writeFileSync(join(dir, 'targets.json'), JSON.stringify(groups));
    const config = prometheusConfig(join(dir, 'targets.json'), 1000, [join(dir, 'rules.yml')]);
    writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config));
    const r = spawnSync('promtool', ['check', 'config', join(dir, 'prometheus.yml')], { encoding: 'utf8' });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    assert.deepEqual(groups[2], {
      targets: ['127.0.0.1:9100'],
      labels: { __param_x: '1', job: 'runner', __metrics_path__: '/custom/path', __scheme__: 'https' },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('setTargets: Prometheus follows a service to its new metrics port', { skip }, async () => {
  const registry = createRegistry({ service: 'processor-1' });
  const lsn = new Gauge({
    name: m.processorAppliedLsn,
    help: 'lsn',
    labelNames: ['partition'],
    registers: [registry],
  });
  lsn.set({ partition: '0' }, 1);
  const before = await startMetricsServer(registry, '127.0.0.1', 0);
  let after: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  try {
    await using prom = await startPrometheus({
      targets: [{ job: 'processor', url: before.url }],
      scrapeIntervalMs: 500,
    });
    await prom.waitForTargetsUp(20_000);
    const [first] = await prom.waitForData(m.processorAppliedLsn, 10_000);
    assert.equal(first?.metric.job, 'processor', 'job label from the targets file');
    // "Restart": the old endpoint goes away, the same service comes back on another port.
    await before.stop();
    lsn.set({ partition: '0' }, 2);
    after = await startMetricsServer(registry, '127.0.0.1', 0);
    assert.notEqual(after.url, before.url);
    await prom.setTargets([{ job: 'processor', url: after.url }]);
    const [moved] = await prom.waitForData(`${m.processorAppliedLsn} == 2`, 20_000);
    assert.equal(moved?.metric.instance, new URL(after.url).host);
    await prom.waitForTargetsUp(20_000);
    const targets = await prom.targets();
    assert.deepEqual(
      targets.map((t) => t.scrapeUrl),
      [after.url],
    );
    const scrapedAfter = Date.now();
    await prom.waitForScrapesAfter(scrapedAfter, 10_000);
    assert.ok((await prom.targets()).every((t) => t.lastScrapeMs >= scrapedAfter));
  } finally {
    await before.stop();
    await after?.stop();
  }
});
