// The testbed's own cost, measured beside its floor in the same run: the wall time of the
// standard suites (chaos/, or LIMBO_BENCH_SUITES) against the sum of their scheduled phases
// (warm-up + chaos, which no run can beat), as a ratio; the reference topology's start-up
// time; and the peak RSS of the runner process (this one, loaded as `limbo` loads it) and of
// the whole cluster during a run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runnerLibrary } from '../src/cli/entry.js';
import type { StartedTarget, Target } from '../src/targets/target.js';
import { bareNodesMs, fmt, groupMemoryMiB } from './load.js';
import { recordGoal } from './summary.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

export async function run(): Promise<void> {
  // The runner as `limbo run` is: its library from the runner's bundle when that is current
  // (LIMBO_RUNNER_BUNDLE=off: module by module), so its memory is the command's.
  const { loadSuites, runSuiteOutcome, createTarget } = await runnerLibrary();
  const paths = (process.env.LIMBO_BENCH_SUITES ?? join(root, 'chaos')).split(',');
  const suites = await loadSuites(paths);
  const out = mkdtempSync(join(tmpdir(), 'limbo-bench-'));
  const reference = createTarget('reference');
  const startUps: number[] = [];
  let started: StartedTarget | undefined;
  // The reference target as it is (its shape and profile decide which checks apply), with
  // its start timed.
  const timed: Target = {
    ...reference,
    start: async (topology, ctx) => {
      const t0 = performance.now();
      started = await reference.start(topology, ctx);
      startUps.push(performance.now() - t0);
      return started;
    },
  };
  // The cluster's memory two ways: private pages + shared pages once (what the machine gives
  // it: the goal), and the sum of its processes' RSS (which counts Node's shared binary once
  // per process).
  let clusterPeakMiB = 0;
  let clusterRssSumPeakMiB = 0;
  const sampler = setInterval(() => {
    const pids = started
      ? [...started.services.values()].map((s) => s.pid()).filter((p) => p !== undefined)
      : [];
    const memory = groupMemoryMiB(pids);
    clusterPeakMiB = Math.max(clusterPeakMiB, memory.resident);
    clusterRssSumPeakMiB = Math.max(clusterRssSumPeakMiB, memory.rssSum);
  }, 250);
  let wallMs = 0;
  let floorMs = 0;
  try {
    for (const { suite } of suites) {
      const t0 = performance.now();
      // As `limbo run` does: only the verdict is kept (the run's data is garbage at the next run).
      const { verdict } = await runSuiteOutcome(suite, {
        target: timed,
        seed: 1,
        outRoot: out,
        replay: 'bench',
      });
      const wall = performance.now() - t0;
      const floor = suite.warmupMs + suite.chaosMs;
      for (const c of verdict.checks)
        if (c.verdict !== 'pass') process.stdout.write(`  ${c.verdict} ${c.name}: ${c.summary}\n`);
      wallMs += wall;
      floorMs += floor;
      process.stdout.write(
        `${suite.name.padEnd(30)} ${verdict.verdict.padEnd(13)} wall ${fmt(wall / 1000)} s  floor ${fmt(floor / 1000)} s  ratio ${fmt(wall / floor, 2)}  runner peak so far ${fmt(process.resourceUsage().maxRSS / 1024, 0)} MiB, now ${fmt(process.memoryUsage().rss / 1048576, 0)} MiB\n`,
      );
    }
  } finally {
    clearInterval(sampler);
    rmSync(out, { recursive: true, force: true });
  }
  const sorted = [...startUps].sort((a, b) => a - b);
  // The machine's phase, beside the one goal in ms: five bare Node processes side by side.
  const bare: number[] = [];
  for (let i = 0; i < 5; i++) bare.push(await bareNodesMs(5));
  const bareMs = [...bare].sort((a, b) => a - b)[2] ?? NaN;
  recordGoal('suitesWall', wallMs / floorMs);
  recordGoal(
    'startUp',
    sorted[Math.floor(sorted.length / 2)] ?? NaN,
    `five bare Node processes ${fmt(bareMs, 0)} ms`,
  );
  recordGoal('runnerRss', process.resourceUsage().maxRSS / 1024);
  recordGoal('clusterRss', clusterPeakMiB);
  process.stdout.write(
    `all ${suites.length} suites: wall ${fmt(wallMs / 1000)} s, floor ${fmt(floorMs / 1000)} s, ratio ${fmt(wallMs / floorMs, 2)}\n` +
      `topology start-up: median ${fmt(sorted[Math.floor(sorted.length / 2)] ?? NaN, 0)} ms, max ${fmt(sorted[sorted.length - 1] ?? NaN, 0)} ms (five bare Node processes side by side, to exit: median ${fmt(bareMs, 0)} ms)\n` +
      `peak RSS: runner ${fmt(process.resourceUsage().maxRSS / 1024)} MiB; cluster ${fmt(clusterPeakMiB)} MiB private + shared once (Σ of its processes' RSS ${fmt(clusterRssSumPeakMiB)} MiB)\n`,
  );
}
