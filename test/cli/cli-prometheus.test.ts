// `limbo run --prometheus on` end to end, as a user runs it: a one-processor suite with PromQL
// assertions runs through the CLI; the run's Prometheus answers them (pass, with the query
// and values as evidence), its URL is printed and recorded in verdict.json, its TSDB stays in
// the run directory, and its process is gone when the CLI exits. Skips only when prometheus
// is not installed, never with LIMBO_PROMETHEUS_REQUIRED=1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { VerdictFile } from '../../src/report/write-report.js';
import { prometheusAvailable } from '../../src/observe/prometheus-server.js';
import { pidAlive } from '../../src/util/pid-alive.js';

const skip =
  prometheusAvailable() || process.env.LIMBO_PROMETHEUS_REQUIRED === '1'
    ? false
    : 'prometheus is not installed (apt-get install --no-install-recommends prometheus)';

const root = fileURLToPath(new URL('../../../', import.meta.url));

test(
  'limbo run --prometheus on: assertions answered by the run’s Prometheus, URL recorded, process gone',
  { skip },
  async (t) => {
    // Inside the package, so `import … from 'limbo'` resolves (as in cli-run.test.ts).
    mkdirSync(join(root, '.limbo'), { recursive: true });
    const dir = mkdtempSync(join(root, '.limbo', 'prom-suite-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(
      join(dir, 'prom-suite.ts'),
      `import { defineSuite, noClientLeftHanging, promql } from 'limbo';
export default defineSuite({
  name: 'prom-cli',
  why: 'the CLI starts a Prometheus and the suite asserts through it',
  topology: { processors: 1, partitions: 1 },
  workload: { concurrency: 2 },
  warmup: '1s',
  chaos: '2s',
  schedule: [],
  expect: [
    noClientLeftHanging(),
    promql({ name: 'drained', query: 'sum(limbo_ingress_pending_requests)', expect: { max: 0 } }),
    promql({ name: 'served', query: 'sum(increase(limbo_ingress_requests_total[1m])) > 0', expect: 'nonEmpty', at: 'range' }),
    promql({ name: 'runnerScraped', query: 'up{job="runner"} == 1', expect: 'nonEmpty' }),
  ],
});
`,
    );
    const out = join(dir, 'runs');
    const proc = spawn(
      process.execPath,
      [
        join(root, 'bin', 'limbo.js'),
        'run',
        join(dir, 'prom-suite.ts'),
        '--prometheus',
        'on',
        '--seed',
        '5',
        '--out',
        out,
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const killer = setTimeout(() => proc.kill('SIGINT'), 120_000);
    const code = await new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
    clearTimeout(killer);
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    assert.match(stdout, /^seed 5\nprometheus one per run/);
    const logged = /prometheus (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+), data: (\S+)\)/.exec(stderr);
    assert.ok(logged, stderr);
    const [, url, pid, dataDir] = logged;
    assert.equal(pidAlive(Number(pid)), false, 'the run’s Prometheus is stopped');

    const [runName] = readdirSync(join(out, 'prom-cli'));
    const verdict = JSON.parse(
      readFileSync(join(out, 'prom-cli', runName!, 'verdict.json'), 'utf8'),
    ) as VerdictFile;
    assert.deepEqual(verdict.prometheus, { url, dataDir });
    assert.equal(dataDir, join(out, 'prom-cli', runName!, 'prometheus'));
    assert.ok(existsSync(join(dataDir, 'wal')), 'TSDB kept in the run directory');
    const checks = new Map(verdict.checks.map((c) => [c.name, c]));
    for (const name of ['drained', 'served', 'runnerScraped'])
      assert.equal(checks.get(name)?.verdict, 'pass', JSON.stringify(checks.get(name)));
    const drained = checks.get('drained')!.evidence.details;
    assert.equal(drained.query, 'sum(limbo_ingress_pending_requests)');
    assert.equal(drained.prometheus, url);
    assert.deepEqual(drained.series, [{ metric: {}, value: 0 }]);
  },
);
