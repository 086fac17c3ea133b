// What `--coverage` costs a run: calls/s of the same cluster with every service under the
// coverage hook (V8 precise block counts, written every second; the services unbundled, as a
// run with coverage starts them) ÷ without (bundled, no hook), side by side in alternating
// rounds; and the cluster's start-up time each way. The goal (at least 0.5) keeps a coverage
// run close enough to a real one that its suites still meet the same situations.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertRunCoverage, coverageEnv } from '../src/coverage/collect.js';
import { TestCluster } from '../test/helpers/cluster.js';
import { closedLoop, fmt, warmUp } from './load.js';
import { recordGoal } from './summary.js';

const DURATION_MS = Number(process.env.LIMBO_BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = 16;
const ROUNDS = Number(process.env.LIMBO_BENCH_ROUNDS ?? 3);

async function measure(env: NodeJS.ProcessEnv): Promise<{ perSecond: number; startMs: number }> {
  const t0 = performance.now();
  await using cluster = await TestCluster.start({ processors: 3, partitions: 4, env });
  await cluster.waitForLeaders();
  const startMs = performance.now() - t0;
  const send = async (): Promise<boolean> => {
    const r = await fetch(`${cluster.url}/Echo/echo`, { method: 'POST', body: '{"x":1}' });
    await r.arrayBuffer();
    return r.status === 200;
  };
  await warmUp(send, CONCURRENCY);
  const r = await closedLoop(send, CONCURRENCY, DURATION_MS);
  return { perSecond: r.perSecond, startMs };
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-bench-coverage-'));
  const plain = { ...process.env };
  delete plain['LIMBO_COVERAGE_DIR'];
  const off: number[] = [];
  const on: number[] = [];
  const start = { off: [] as number[], on: [] as number[] };
  let files = 0;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [
        async (): Promise<void> => {
          const a = await measure(plain);
          off.push(a.perSecond);
          start.off.push(a.startMs);
        },
        async (): Promise<void> => {
          const runDir = join(dir, `round-${round}`);
          const b = await measure(coverageEnv(plain, runDir));
          on.push(b.perSecond);
          start.on.push(b.startMs);
          files = await convertRunCoverage(runDir);
        },
      ];
      // Each round starts with the other side, spreading the machine's drift over both.
      for (let i = 0; i < sides.length; i++) await sides[(round + i) % sides.length]!();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const list = (xs: number[]): string => xs.map((x) => fmt(x, 0)).join(', ');
  console.log(`concurrency ${CONCURRENCY}, ${DURATION_MS} ms per side per round, ${ROUNDS} rounds`);
  console.log(`without coverage: ${list(off)} calls/s; start-up ${list(start.off)} ms`);
  console.log(
    `with --coverage: ${list(on)} calls/s; start-up ${list(start.on)} ms; ${files} source files covered`,
  );
  console.log(`start-up with ÷ without: ${fmt(mean(start.on) / mean(start.off), 2)}`);
  recordGoal('coverageOverhead', mean(on) / mean(off));
}
