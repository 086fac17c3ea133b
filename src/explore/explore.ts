// `limbo explore`: searches random fault schedules for a failing run. Each run draws a seed,
// a schedule from the fault catalogue (plan.ts) and runs it with the invariant checks (no
// client left hanging, pending drains, exactly once, idempotent retries agree). A run whose
// checks fail is shrunk (shrink.ts, same seed), confirmed, and saved as a seed file that
// `limbo run seeds/` replays. Bounded by a run count and a wall-clock budget.
//
//   seed ─▶ run i: fork ─▶ schedule ─▶ runSuite ─▶ fail? ─▶ shrink ─▶ confirm ─▶ seeds/<name>.json
import type { SuiteRunOutcome } from '../runner/run-suite.js';
import { defineSuite, type Suite } from '../runner/suite.js';
import type { TargetShape, Topology } from '../targets/target.js';
import { createRandom, type Random } from '../util/random.js';
import type { WorkloadSpec } from '../workload/workload.js';
import {
  describePlanned,
  generateSchedule,
  toScheduleEntries,
  type ExploreFaultKind,
  type PlannedFault,
} from './plan.js';
import { checkersOf, type SeedCheck, type SeedFile } from '../runner/seed-file.js';
import { shrinkSchedule, type ShrinkConfirm } from './shrink.js';
import type { Corpus } from './guided.js';
import { inShard, type Shard } from '../runner/shard.js';

export const exploreChecks = (withinMsAfterHeal: number): SeedCheck[] => [
  { name: 'noClientLeftHanging', options: { withinMsAfterHeal } },
  { name: 'pendingDrains' },
  { name: 'exactlyOnce' },
  { name: 'idempotentRetriesAgree' },
  { name: 'gracefulStops' },
];

export const exploreTopology: Topology = { processors: 3, partitions: 4, ingresses: 1 };
export const exploreWorkload: WorkloadSpec = {
  concurrency: 12,
  mix: { call: 0.5, send: 0.2, counterAdd: 0.2, idempotentRetry: 0.1 },
};

export interface ExploreOptions {
  targetName: string;
  seed: number;
  runs: number;
  budgetMs: number;
  maxFaults: number;
  kinds: readonly ExploreFaultKind[];
  /** A declared target's links and services (default: the reference topology). */
  shape?: TargetShape;
  chaosMs: number;
  convergeMs: number;
  shrinkRuns: number;
  /** A smaller candidate is kept when at least k of m re-runs fail (default 1 of 1). */
  shrinkConfirm?: ShrinkConfirm;
  confirmRuns: number;
  /** Schedules explored side by side, each on its own topology (default 1). */
  parallel?: number;
  /** Coverage-guided: schedules derived from this corpus as well as drawn fresh (guided.ts). */
  guide?: Corpus;
  /** Only the schedules of this shard (index % count == index-1 of the unsharded list). */
  shard?: Shard;
  /** Runs one suite with a seed in a slot (the CLI wires runSuite with progress and cleanup). */
  runOne: (suite: Suite, seed: number, slot: number) => Promise<SuiteRunOutcome>;
  /** Saves a found seed file; returns its path. */
  save: (seed: SeedFile) => string;
  write: (line: string) => void;
  nowMs?: () => number;
}

export interface ExploreRun {
  seed: number;
  schedule: PlannedFault[];
  verdict: string;
  failed: string[];
  runDir: string;
}

export interface ExploreResult {
  runs: ExploreRun[];
  /** Seed files written, one per failing run. */
  found: string[];
  stoppedBy: 'runs' | 'budget';
  /** Guided: what the runs reached together, and the corpus's size at the end. */
  reached?: { branches: number; cells: number; corpus: number };
}

const failedChecks = (res: SuiteRunOutcome): string[] =>
  res.verdict.checks.filter((c) => c.verdict === 'fail').map((c) => c.name);

export function exploreSuite(name: string, planned: readonly PlannedFault[], o: ExploreOptions): Suite {
  return defineSuite({
    name,
    why: `A random schedule from limbo explore: ${planned.map(describePlanned).join('; ')}`,
    topology: exploreTopology,
    workload: exploreWorkload,
    schedule: toScheduleEntries(planned),
    expect: checkersOf(exploreChecks(o.convergeMs), 'limbo explore'),
    chaos: o.chaosMs,
    converge: o.convergeMs,
  });
}

/**
 * Explores `runs` random schedules, `parallel` at a time (each slot runs a schedule, and its
 * shrinking and confirmations, on its own topology). Schedule i is drawn from the seed's fork
 * `run-i`, so what runs, and how each failure shrinks, does not depend on the parallelism;
 * results are reported in schedule order.
 */
export async function explore(o: ExploreOptions): Promise<ExploreResult> {
  const now = o.nowMs ?? (() => Date.now());
  const started = now();
  const random = createRandom(o.seed);
  const indices = Array.from({ length: o.runs }, (_, i) => i).filter((i) => inShard(i, o.shard));
  const parallel = Math.max(1, Math.min(o.parallel ?? 1, indices.length));
  const done: ({ run: ExploreRun; found?: string } | undefined)[] = [];
  let next = 0;
  let stoppedBy: ExploreResult['stoppedBy'] = 'runs';
  const slot = async (k: number): Promise<void> => {
    for (;;) {
      const i = indices[next];
      if (i === undefined) return;
      if (now() - started >= o.budgetMs) {
        stoppedBy = 'budget';
        return;
      }
      next++;
      done[i] = await exploreOne(i, k, random.fork(`run-${i}`), o, parallel > 1 ? `[slot ${k + 1}] ` : '');
    }
  };
  await Promise.all(Array.from({ length: parallel }, (_, k) => slot(k)));
  const finished = done.filter((d): d is { run: ExploreRun; found?: string } => d !== undefined);
  return {
    runs: finished.map((d) => d.run),
    found: finished.flatMap((d) => (d.found !== undefined ? [d.found] : [])),
    stoppedBy,
    ...(o.guide !== undefined
      ? {
          reached: {
            branches: o.guide.branchCount,
            cells: o.guide.cellCount,
            corpus: o.guide.entries.length,
          },
        }
      : {}),
  };
}

/** Schedule i's seed and faults (without a guide, they follow from the search's seed alone). */
export function plannedRun(
  i: number,
  o: Pick<ExploreOptions, 'seed' | 'chaosMs' | 'maxFaults' | 'kinds' | 'shape'>,
): { seed: number; schedule: PlannedFault[] } {
  const { seed, drawn } = drawRun(createRandom(o.seed).fork(`run-${i}`), o);
  return { seed, schedule: drawn.schedule };
}

function drawRun(
  r: Random,
  o: Pick<ExploreOptions, 'chaosMs' | 'maxFaults' | 'kinds' | 'shape' | 'guide'>,
): { seed: number; drawn: { schedule: PlannedFault[]; from?: string; how?: string } } {
  const seed = r.int(0x100000000);
  const generate = {
    topology: exploreTopology,
    chaosMs: o.chaosMs,
    maxFaults: o.maxFaults,
    kinds: o.kinds,
    ...(o.shape !== undefined ? { shape: o.shape } : {}),
  };
  const drawn =
    o.guide !== undefined
      ? o.guide.next(r.fork('schedule'), generate)
      : { schedule: generateSchedule(r.fork('schedule'), generate) };
  return { seed, drawn };
}

/** One schedule: run it; if it fails, shrink it, confirm it and save it as a seed file. */
async function exploreOne(
  i: number,
  slot: number,
  r: Random,
  o: ExploreOptions,
  prefix: string,
): Promise<{ run: ExploreRun; found?: string }> {
  const write = (line: string): void =>
    o.write(line.startsWith('\n') ? `\n${prefix}${line.slice(1)}` : prefix + line);
  const { seed, drawn } = drawRun(r, o);
  const planned = drawn.schedule;
  const name = `explore-${o.targetName.replace(/[^A-Za-z0-9]+/g, '-')}-${seed}`;
  const origin = drawn.from !== undefined ? ` (from ${drawn.from}: ${drawn.how})` : '';
  write(`\nrun ${i + 1}/${o.runs} seed ${seed}${origin}: ${planned.map(describePlanned).join('; ')}`);
  const res = await o.runOne(exploreSuite(name, planned, o), seed, slot);
  if (o.guide !== undefined) {
    const g = o.guide.observe(name, seed, planned, res.runDir);
    write(
      `  reached ${g.branches} branch arm(s) (+${g.newBranches}) and ${g.cells} fault-space cell(s) (+${g.newCells}); corpus ${g.corpus}${g.kept ? ' (this schedule joined it)' : ''}`,
    );
  }
  const failed = failedChecks(res);
  const run: ExploreRun = {
    seed,
    schedule: planned,
    verdict: res.verdict.verdict,
    failed,
    runDir: res.runDir,
  };
  write(
    `run ${i + 1}: ${res.verdict.verdict}${failed.length ? ` (${failed.join(', ')} failed)` : ''}  ${res.runDir}`,
  );
  if (failed.length === 0) return { run };

  const stillFails = async (candidate: PlannedFault[]): Promise<boolean> => {
    const again = await o.runOne(exploreSuite(name, candidate, o), seed, slot);
    return failedChecks(again).some((c) => failed.includes(c));
  };
  const shrunk = await shrinkSchedule(
    planned,
    stillFails,
    o.shrinkRuns,
    (m) => write(`  ${m}`),
    o.shrinkConfirm,
  );
  let confirmed = 0;
  for (let c = 0; c < o.confirmRuns; c++) {
    const ok = await stillFails(shrunk.planned);
    if (ok) confirmed++;
    write(`  confirm ${c + 1}/${o.confirmRuns}: ${ok ? 'fails again' : 'passed this time'}`);
  }
  const seedFile: SeedFile = {
    kind: 'limbo-seed',
    version: 1,
    name,
    why: `Found by limbo explore on ${o.targetName}: ${failed.join(', ')} failed under ${shrunk.planned.map(describePlanned).join('; ')}`,
    foundOn: o.targetName,
    foundAt: new Date().toISOString(),
    seed,
    topology: exploreTopology,
    workload: exploreWorkload,
    chaosMs: o.chaosMs,
    convergeMs: o.convergeMs,
    schedule: shrunk.planned,
    expect: exploreChecks(o.convergeMs),
    failed,
    expectedToFailOn: [o.targetName],
    // A failure that did not reproduce on every confirmation depends on timing.
    timingDependentOn: confirmed < o.confirmRuns ? [o.targetName] : [],
  };
  const file = o.save(seedFile);
  write(
    `  saved ${file} (${shrunk.planned.length} of ${planned.length} faults, ${shrunk.runs} shrink runs, confirmed ${confirmed}/${o.confirmRuns})`,
  );
  return { run, found: file };
}
