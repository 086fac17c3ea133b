import { test } from 'node:test';
import { pairOps } from '../../src/run-data/run-data.js';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { Counter, Gauge, Registry } from 'prom-client';
import { startMetricsServer } from '../../src/telemetry/metrics.js';
import { createClock } from '../../src/util/clock.js';
import { startScraper } from '../../src/observe/scraper.js';
import { parsePrometheusText } from '../../src/telemetry/prom-text.js';
import { defineSuite } from '../../src/runner/suite.js';
import { runSuite, type Progress } from '../../src/runner/run-suite.js';
import { at, kill, latency, type Fault } from '../../src/faults/index.js';
import { exactlyOnce, noClientLeftHanging, pendingDrains } from '../../src/checkers/index.js';
import type { Target } from '../../src/targets/target.js';
import { UsageError } from '../../src/util/errors.js';
import { startToyIngress, type ToyIngress } from '../helpers/toy-ingress.js';
import { startToyTarget } from '../helpers/toy-target.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('the scraper reads a real prom-client registry every interval and survives a dead target', async (t) => {
  const registry = new Registry();
  const c = new Counter({
    name: 'limbo_ingress_resends_total',
    help: 'h',
    labelNames: ['partition', 'reason'],
    registers: [registry],
  });
  const g = new Gauge({
    name: 'limbo_ingress_pending_requests',
    help: 'h',
    labelNames: ['kind'],
    registers: [registry],
  });
  new Gauge({ name: 'other_metric', help: 'h', registers: [registry] }).set(1);
  const server = await startMetricsServer(registry, '127.0.0.1', 0);
  t.after(() => server.stop());
  const dead = net.createServer();
  await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
  const deadUrl = `http://127.0.0.1:${(dead.address() as net.AddressInfo).port}/metrics`;
  await new Promise<void>((r) => dead.close(() => r()));
  c.inc({ partition: '0', reason: 'timeout' }, 2);
  g.set({ kind: 'we"ird' }, 3);
  const scraper = startScraper({
    clock: createClock(),
    intervalMs: 50,
    targets: () => ({ 'ingress-1': server.url, gone: deadUrl }),
  });
  t.after(() => scraper.stop());
  const deadline = Date.now() + 10_000;
  while (scraper.scrapes() < 4 && Date.now() < deadline) await sleep(20);
  c.inc({ partition: '0', reason: 'timeout' });
  await scraper.scrapeOnce();
  await scraper.stop();
  assert.ok(scraper.scrapes() >= 5);
  assert.ok(scraper.errors() >= 1);
  const resends = scraper.samples.filter((s) => s.name === 'limbo_ingress_resends_total');
  assert.deepEqual(resends[0]?.labels, { partition: '0', reason: 'timeout' });
  assert.equal(resends[0]?.service, 'ingress-1');
  assert.equal(resends[resends.length - 1]?.value, 3);
  assert.ok(resends.every((s, i) => i === 0 || s.tMs >= resends[i - 1]!.tMs));
  assert.equal(
    scraper.samples.find((s) => s.name === 'limbo_ingress_pending_requests')?.labels['kind'],
    'we"ird',
  );
  assert.ok(!scraper.samples.some((s) => s.name === 'other_metric'), 'only limbo_* and toxiproxy_* kept');
});

test('prom text: labels with escapes, +Inf, comments', () => {
  const s = parsePrometheusText(
    '# HELP x y\nx_bucket{le="+Inf",a="b\\\\c"} 4\ny 1.5e3 1700000000\nbad line\n',
  );
  assert.deepEqual(s, [
    { name: 'x_bucket', labels: { le: '+Inf', a: 'b\\c' }, value: 4 },
    { name: 'y', labels: {}, value: 1500 },
  ]);
});

test('defineSuite validates and fills defaults; bad suites are usage errors', () => {
  const s = defineSuite({
    name: 'x',
    why: 'because',
    schedule: [at('1s', kill('processor-1'), { for: '2s' })],
    expect: [noClientLeftHanging()],
  });
  assert.equal(s.chaosMs, 4000);
  assert.equal(s.warmupMs, 2000);
  assert.deepEqual(s.topology, { processors: 3, partitions: 4, ingresses: 1 });
  assert.throws(
    () => defineSuite({ name: 'bad name', why: 'w', schedule: [], expect: [noClientLeftHanging()] }),
    UsageError,
  );
  assert.throws(
    () => defineSuite({ name: 'x', why: '', schedule: [], expect: [noClientLeftHanging()] }),
    /why/,
  );
  assert.throws(() => defineSuite({ name: 'x', why: 'w', schedule: [], expect: [] }), /checker/);
});

function toyTarget(ingress: ToyIngress): Target & { runDirs: string[] } {
  const runDirs: string[] = [];
  return {
    name: 'toy',
    runDirs,
    async start(topology, ctx) {
      runDirs.push(ctx.runDir);
      return startToyTarget(topology.processors, {
        ingressUrls: [ingress.url],
        metricsUrls: { 'ingress-1': ingress.metrics.url },
        proxyIngress: true,
      });
    },
  };
}

test('a suite run goes through every phase and writes a passing run directory', async (t) => {
  const ingress = await startToyIngress();
  t.after(() => ingress.stop());
  const out = mkdtempSync(join(tmpdir(), 'limbo-run-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const suite = defineSuite({
    name: 'toy-slow-clients',
    why: 'the clients’ link is slow for a while; the toy ingress answers every call',
    topology: { processors: 2 },
    workload: { concurrency: 3, opTimeoutMs: 5000 },
    warmup: '200ms',
    converge: '2s',
    // On the link the clients use: a fault on a toy processor nobody talks to would meet no
    // traffic, and the run would rightly be inconclusive.
    schedule: [at('200ms', latency('client->ingress', { latencyMs: 20 }), { for: '400ms' })],
    expect: [noClientLeftHanging({ withinMsAfterHeal: 3000 }), pendingDrains(), exactlyOnce()],
  });
  const phases: string[] = [];
  const res = await runSuite(suite, {
    target: toyTarget(ingress),
    seed: 11,
    outRoot: out,
    replay: 'npx limbo run toy --seed 11',
    scrapeIntervalMs: 100,
    progressIntervalMs: 50,
    onProgress: (p: Progress) => {
      if (phases[phases.length - 1] !== p.phase) phases.push(p.phase);
    },
  });
  assert.deepEqual(phases, ['start', 'warm-up', 'chaos', 'heal', 'converge', 'check', 'report', 'done']);
  assert.equal(
    res.verdict.verdict,
    'pass',
    JSON.stringify(res.verdict.checks.map((c) => [c.name, c.verdict, c.summary])),
  );
  assert.ok(res.verdict.checks.some((c) => c.name === 'faultsHitTraffic' && c.verdict === 'pass'));
  assert.equal(res.run.faults.length, 1);
  const p = res.run.phases;
  assert.ok(
    p.chaosStartMs! <= res.run.faults[0]!.injectedAtMs && res.run.faults[0]!.healedAtMs! <= p.healedAtMs!,
  );
  for (const f of ['verdict.json', 'junit.xml', 'history.jsonl', 'series.json', 'faults.json'])
    assert.ok(existsSync(join(res.runDir, f)), f);
  assert.ok(existsSync(join(out, 'latest', 'verdict.json')));
  const active = res.run.series.filter((s) => s.service === 'runner' && s.name === 'limbo_fault_active');
  assert.ok(
    active.some(
      (s) => s.value === 1 && s.labels['fault'] === 'latency' && s.labels['target'] === 'client->ingress',
    ),
  );
  assert.ok(res.run.series.some((s) => s.service === 'runner' && s.name === 'limbo_workload_pending'));
  assert.ok(res.verdict.ops.total > 10);
  // The runner's final reads: one of each counter that got adds, then an attach to each
  // invocation a call or send saw acknowledged with its id.
  const finals = res.run.history.filter((o) => o.type === 'invoke' && o.request?.final === true);
  const added = new Set(
    res.run.history.filter((o) => o.kind === 'counterAdd').map((o) => o.request?.counterKey),
  );
  assert.ok(added.size > 0);
  assert.equal(finals.filter((o) => o.kind === 'counterGet').length, added.size);
  const acknowledged = new Set(
    pairOps(res.run.history)
      .filter((p) => p.end?.type === 'ok' && p.invoke.request?.final !== true)
      .filter((p) => ['call', 'send', 'idempotentRetry'].includes(p.invoke.kind))
      .map((p) => p.end?.invocationId ?? p.invoke.invocationId),
  );
  assert.deepEqual(
    new Set(finals.filter((o) => o.kind === 'attach').map((o) => o.invocationId)),
    acknowledged,
  );
  assert.equal(finals.length, added.size + acknowledged.size);
});

test('a system that stops answering during chaos fails with the hung invocation ids', async (t) => {
  const ingress = await startToyIngress();
  t.after(() => ingress.stop());
  const out = mkdtempSync(join(tmpdir(), 'limbo-run-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const goSilent: Fault = {
    name: 'go-silent',
    describe: 'ingress',
    inject: () => {
      ingress.behaviour.hang = true;
      return Promise.resolve({ target: 'ingress-1', affects: ['ingress-1'] });
    },
    heal: () => Promise.resolve(), // the bug: nothing answers the requests caught in it
  };
  const suite = defineSuite({
    name: 'toy-hang',
    why: 'requests caught in the hang are never answered',
    topology: { processors: 1 },
    workload: { concurrency: 2, mix: { call: 1 }, opTimeoutMs: 60_000 },
    warmup: '100ms',
    converge: '500ms',
    schedule: [at('100ms', goSilent, { for: '200ms' })],
    expect: [noClientLeftHanging({ withinMsAfterHeal: 200 })],
  });
  const res = await runSuite(suite, {
    target: toyTarget(ingress),
    seed: 5,
    outRoot: out,
    replay: 'r',
    scrapeIntervalMs: 100,
  });
  assert.equal(res.verdict.verdict, 'fail');
  const hang = res.verdict.checks.find((c) => c.name === 'noClientLeftHanging')!;
  assert.equal(hang.evidence.invocationIds?.length, 2);
  assert.ok(hang.evidence.invocationIds.every((id) => /^inv_[0-9a-f]{8}_/.test(id)));
  assert.equal(res.verdict.ops.open, 2);
  const junit = readFileSync(join(res.runDir, 'junit.xml'), 'utf8');
  // The failure's first line says why (the diagnosis), then what the check found.
  assert.match(junit, /<failure message="why: 2 calls left hanging, [^"]*\| 2 of \d+ ops left hanging"/);
});

test("a run's data is garbage by the time the next run of the process starts", async (t) => {
  const ingress = await startToyIngress();
  t.after(() => ingress.stop());
  const out = mkdtempSync(join(tmpdir(), 'limbo-run-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const suite = defineSuite({
    name: 'toy-twice',
    why: 'two runs back to back, as `limbo run chaos` makes them',
    topology: { processors: 1 },
    workload: { concurrency: 2, opTimeoutMs: 5000 },
    warmup: '200ms',
    converge: '1s',
    schedule: [],
    expect: [noClientLeftHanging({ withinMsAfterHeal: 3000 })],
  });
  const options = { target: toyTarget(ingress), seed: 3, outRoot: out, replay: 'toy', scrapeIntervalMs: 100 };
  // The first run's data is reachable only through a WeakRef once its result is dropped.
  const first = await (async () => {
    const res = await runSuite(suite, options);
    assert.ok(res.run.history.length > 0);
    return { verdict: res.verdict.verdict, run: new WeakRef(res.run) };
  })();
  assert.equal(first.verdict, 'pass');
  // The second run starts at once (the first one's servers closed a moment ago); by its first
  // progress tick it has collected, and the first run must be gone.
  let goneAtStart: boolean | undefined;
  const second = await runSuite(suite, {
    ...options,
    onProgress: (p: Progress) => {
      if (goneAtStart === undefined && p.phase === 'start') goneAtStart = first.run.deref() === undefined;
    },
  });
  assert.equal(second.verdict.verdict, 'pass');
  assert.equal(goneAtStart, true, 'the first run was still reachable when the second one started');
});
