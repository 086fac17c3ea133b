// PromQL assertions: the pure check over what the run's Prometheus answered, the choice of
// `--prometheus auto|on|off` (a suite loaded through tsx is still seen to assert PromQL), and
// the CLI refusing `--prometheus on` without a binary (exit 2), and a run going on without a
// Prometheus that cannot start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { limboMetricsIn, promql, promqlQueryOf, type PromqlOptions } from '../../src/checkers/promql.js';
import { runCheckersOn } from '../../src/checkers/checker.js';
import { pendingDrains } from '../../src/checkers/pending-drains.js';
import { runPrometheusChoice } from '../../src/cli/run-prometheus-choice.js';
import { loadSuite } from '../../src/runner/load-suites.js';
import type { PromqlEvaluation, RunData } from '../../src/run-data/run-data.js';
import { runSuite } from '../../src/runner/run-suite.js';
import { defineSuite } from '../../src/runner/suite.js';
import { UsageError } from '../../src/util/errors.js';
import { RunBuilder } from '../helpers/run-data-builder.js';
import { startToyIngress } from '../helpers/toy-ingress.js';
import { startToyTarget } from '../helpers/toy-target.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const Q = 'sum(limbo_ingress_pending_requests)';

function runWith(evaluations: Omit<PromqlEvaluation, 'startWall' | 'endWall'>[]): RunData {
  const run = new RunBuilder().run;
  run.prometheus = {
    url: 'http://127.0.0.1:9090',
    dataDir: '/tmp/x',
    evaluations: evaluations.map((e) => ({
      ...e,
      startWall: '2026-01-01T00:00:00.000Z',
      endWall: '2026-01-01T00:01:00.000Z',
    })),
  };
  return run;
}

const series = (...values: number[]): PromqlEvaluation['series'] => [
  { metric: { service: 'ingress-1' }, values: values.map((v, i) => [i, v]) },
];

function verdictOf(options: PromqlOptions, run: RunData): string {
  const r = promql(options).check(run);
  return `${r.verdict}: ${r.summary}`;
}

test('promql: bounds, empty and nonEmpty, at the end and over a range', () => {
  const end = (values: number[]) => runWith([{ query: Q, at: 'end', series: series(...values) }]);
  assert.match(verdictOf({ query: Q, expect: { max: 0 } }, end([0])), /^pass/);
  assert.match(verdictOf({ query: Q, expect: { max: 0 } }, end([3])), /^fail: .*service="ingress-1".*=3/);
  assert.match(verdictOf({ query: Q, expect: { min: 1, max: 5 } }, end([3])), /^pass/);
  assert.match(verdictOf({ query: Q, expect: { min: 4 } }, end([3])), /^fail/);
  assert.match(verdictOf({ query: Q, expect: { max: 10 } }, end([NaN])), /^fail.*NaN/);
  assert.match(verdictOf({ query: Q, expect: 'nonEmpty' }, end([0])), /^pass/);
  assert.match(verdictOf({ query: Q, expect: 'empty' }, end([0])), /^fail/);
  const none = runWith([{ query: Q, at: 'end', series: [] }]);
  assert.match(verdictOf({ query: Q, expect: 'empty' }, none), /^pass/);
  assert.match(verdictOf({ query: Q, expect: 'nonEmpty' }, none), /^fail/);
  assert.match(verdictOf({ query: Q, expect: { max: 0 } }, none), /^inconclusive: .*no data/);

  const range = runWith([{ query: Q, at: 'range', series: series(0, 2, 7, 0) }]);
  assert.match(
    verdictOf({ query: Q, expect: { max: 5 }, at: 'range' }, range),
    /^fail: .*during the run: .*=7$/,
  );
  assert.match(verdictOf({ query: Q, expect: { max: 7 }, at: 'range' }, range), /^pass: .*\(0\.\.7\)/);
  // The range evaluation is not the end evaluation.
  assert.match(verdictOf({ query: Q, expect: { max: 7 } }, range), /^inconclusive: .*not evaluated/);

  const r = promql({ name: 'drained', query: Q, expect: { max: 0 } }).check(end([3]));
  assert.equal(r.name, 'drained');
  assert.equal(r.evidence.details.query, Q);
  assert.equal(r.evidence.details.prometheus, 'http://127.0.0.1:9090');
  assert.deepEqual(r.evidence.details.series, [{ metric: { service: 'ingress-1' }, value: 3 }]);
});

test('promql: no Prometheus is inconclusive with the reason; bad PromQL fails; other errors are inconclusive', () => {
  const off = new RunBuilder().run;
  off.prometheus = { missing: '--prometheus off', evaluations: [] };
  assert.equal(
    verdictOf({ query: Q, expect: 'empty' }, off),
    'inconclusive: no Prometheus in this run: --prometheus off',
  );
  assert.match(
    verdictOf({ query: Q, expect: 'empty' }, new RunBuilder().run),
    /^inconclusive: no Prometheus/,
  );
  const bad = runWith([
    { query: Q, at: 'end', series: [], error: { type: 'bad_data', message: 'parse error' } },
  ]);
  assert.match(verdictOf({ query: Q, expect: 'empty' }, bad), /^fail: .*parse error/);
  const down = runWith([
    { query: Q, at: 'end', series: [], error: { type: 'unavailable', message: 'ECONNREFUSED' } },
  ]);
  assert.match(verdictOf({ query: Q, expect: 'empty' }, down), /^inconclusive: .*ECONNREFUSED/);
  assert.throws(() => promql({ query: '', expect: 'empty' }), UsageError);
  assert.throws(() => promql({ query: Q, expect: 'some' as 'empty' }), UsageError);
  assert.throws(() => promql({ query: Q, expect: {} as { max: number } }), UsageError);
  assert.throws(() => promql({ query: Q, expect: { max: Infinity } }), UsageError);
  assert.throws(() => promql({ query: Q, expect: 'empty', at: 'start' as 'end' }), UsageError);
});

test('--prometheus: off by default, auto when a suite asserts PromQL, on requires the binary', async () => {
  const plain = defineSuite({ name: 'plain', why: 'no promql', schedule: [], expect: [pendingDrains()] });
  const asserting = defineSuite({
    name: 'asserting',
    why: 'promql',
    schedule: [],
    expect: [promql({ query: Q, expect: { max: 0 } })],
  });
  const yes = () => true;
  const no = () => false;
  assert.equal(runPrometheusChoice(undefined, [plain], yes).runOptions.prometheus, undefined);
  assert.ok(runPrometheusChoice(undefined, [plain, asserting], yes).runOptions.prometheus);
  assert.match(runPrometheusChoice(undefined, [asserting], yes).summary, /PromQL assertions in asserting/);
  assert.equal(
    runPrometheusChoice('off', [asserting], yes).runOptions.noPrometheusReason,
    '--prometheus off',
  );
  assert.match(
    runPrometheusChoice('auto', [plain], no).runOptions.noPrometheusReason ?? '',
    /no prometheus binary on PATH/,
  );
  assert.throws(() => runPrometheusChoice('on', [plain], no), UsageError);
  const rules = runPrometheusChoice('on', [plain], yes).runOptions.prometheus?.rulesFiles ?? [];
  assert.match(rules[0] ?? '', /dashboards\/alerts\.yml$/);

  // chaos/leader-kill.ts loads through tsx, with its own copy of the checker module.
  const { suite } = await loadSuite(join(root, 'chaos', 'leader-kill.ts'));
  assert.ok(suite.expect.some((c) => promqlQueryOf(c) !== undefined));
  assert.ok(runPrometheusChoice(undefined, [suite], yes).runOptions.prometheus);
});

test('limbo run --prometheus on without a prometheus binary exits 2; a bad value exits 2', () => {
  const limbo = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
    spawnSync(process.execPath, [join(root, 'bin', 'limbo.js'), 'run', ...args], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
      env,
    });
  // An empty PATH: no prometheus (node itself is started by its absolute path).
  let r = limbo([join(root, 'chaos', 'leader-kill.ts'), '--prometheus', 'on'], {
    ...process.env,
    PATH: join(root, 'no-such-dir'),
  });
  assert.equal(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /--prometheus on: no prometheus binary/);
  r = limbo([join(root, 'chaos', 'leader-kill.ts'), '--prometheus', 'sometimes']);
  assert.equal(r.status, 2, r.stdout + r.stderr);
});

test('a run whose Prometheus cannot start goes on; its PromQL assertions are inconclusive with the reason', async (t) => {
  const ingress = await startToyIngress();
  t.after(() => ingress.stop());
  const out = mkdtempSync(join(tmpdir(), 'limbo-promql-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const suite = defineSuite({
    name: 'no-prometheus',
    why: 'the Prometheus binary is missing',
    topology: { processors: 1 },
    workload: { concurrency: 2, opTimeoutMs: 5000 },
    warmup: '100ms',
    chaos: '300ms',
    converge: '2s',
    schedule: [],
    expect: [pendingDrains(), promql({ name: 'drained', query: Q, expect: { max: 0 } })],
  });
  const logs: string[] = [];
  const res = await runSuite(suite, {
    target: {
      name: 'toy',
      start: () =>
        startToyTarget(1, { ingressUrls: [ingress.url], metricsUrls: { 'ingress-1': ingress.metrics.url } }),
    },
    seed: 3,
    outRoot: out,
    replay: 'r',
    trace: false,
    prometheus: { binary: join(out, 'no-such-prometheus') },
    onLog: (line) => logs.push(line),
  });
  const drained = res.verdict.checks.find((c) => c.name === 'drained');
  assert.equal(drained?.verdict, 'inconclusive');
  assert.match(drained?.summary ?? '', /no Prometheus in this run: prometheus did not start/);
  assert.equal(res.verdict.checks.find((c) => c.name === 'pendingDrains')?.verdict, 'pass');
  assert.equal(res.verdict.prometheus, undefined);
  assert.ok(
    logs.some((l) => l.startsWith('prometheus did not start')),
    logs.join('\n'),
  );
});

test('a PromQL check needs the limbo metrics its query names, and is skipped where a target lacks them all', () => {
  const q =
    'sum({__name__=~"limbo_ingress_pending_requests|limbo_processor_pending_rpcs"}) + 0 * sum(rate(limbo_ingress_request_duration_seconds_bucket[1m]))';
  assert.deepEqual(limboMetricsIn(q), [
    'limbo_ingress_pending_requests',
    'limbo_processor_pending_rpcs',
    'limbo_ingress_request_duration_seconds',
  ]);
  const pending = promql({ query: 'sum(limbo_ingress_pending_requests)', expect: { max: 0 } });
  assert.deepEqual(pending.needs, ['limbo_ingress_pending_requests']);
  const run = runWith([]);
  const [skipped] = runCheckersOn([pending], run, { limbo_ingress_pending_requests: 'no such gauge' });
  assert.equal(skipped?.verdict, 'inconclusive');
  assert.match(skipped?.skipped ?? '', /no such gauge/);
  // A target that has the signal: the check is judged (here: not evaluated → inconclusive, not skipped).
  const [judged] = runCheckersOn([pending], run, {});
  assert.equal(judged?.skipped, undefined);
  assert.deepEqual(promql({ query: 'up', expect: 'nonEmpty', needs: ['x'] }).needs, ['x']);
});
