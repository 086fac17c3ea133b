// `limbo explore`: searches random fault schedules for a failing run. Each run draws a seed,
// a schedule from the fault catalogue (plan.ts) and runs it with the invariant checks (no
// client left hanging, pending drains, exactly once, idempotent retries agree). A run whose
// checks fail is shrunk (shrink.ts, same seed), confirmed, and saved as a seed file that
// `limbo run seeds/` replays. Bounded by a run count and a wall-clock budget.
//
//   seed ─▶ run i: fork ─▶ schedule ─▶ runSuite ─▶ fail? ─▶ shrink ─▶ confirm ─▶ seeds/<name>.json
import type { SuiteRunResult } from '../runner/run-suite.js';
import { defineSuite, type Suite } from '../runner/suite.js';
import type { TargetShape, Topology } from '../targets/target.js';
import { createRandom } from '../util/random.js';
import type { WorkloadSpec } from '../workload/workload.js';
import {
  describePlanned,
  generateSchedule,
  toScheduleEntries,
  type ExploreFaultKind,
  type PlannedFault,
} from './plan.js';
import { checkersOf, type SeedCheck, type SeedFile } from './seed-file.js';
import { shrinkSchedule } from './shrink.js';

export const exploreChecks = (withinMsAfterHeal: number): SeedCheck[] => [
  { name: 'noClientLeftHanging', options: { withinMsAfterHeal } },
  { name: 'pendingDrains' },
  { name: 'exactlyOnce' },
  { name: 'idempotentRetriesAgree' },
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
  confirmRuns: number;
  /** Runs one suite with a seed (the CLI wires runSuite with progress and cleanup). */
  runOne: (suite: Suite, seed: number) => Promise<SuiteRunResult>;
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
}

const failedChecks = (res: SuiteRunResult): string[] =>
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

export async function explore(o: ExploreOptions): Promise<ExploreResult> {
  const now = o.nowMs ?? (() => Date.now());
  const started = now();
  const random = createRandom(o.seed);
  const runs: ExploreRun[] = [];
  const found: string[] = [];
  for (let i = 0; i < o.runs; i++) {
    if (now() - started >= o.budgetMs) return { runs, found, stoppedBy: 'budget' };
    const r = random.fork(`run-${i}`);
    const seed = r.int(0x100000000);
    const planned = generateSchedule(r.fork('schedule'), {
      topology: exploreTopology,
      chaosMs: o.chaosMs,
      maxFaults: o.maxFaults,
      kinds: o.kinds,
      ...(o.shape !== undefined ? { shape: o.shape } : {}),
    });
    const name = `explore-${o.targetName.replace(/[^A-Za-z0-9]+/g, '-')}-${seed}`;
    o.write(`\nrun ${i + 1}/${o.runs} seed ${seed}: ${planned.map(describePlanned).join('; ')}`);
    const res = await o.runOne(exploreSuite(name, planned, o), seed);
    const failed = failedChecks(res);
    runs.push({ seed, schedule: planned, verdict: res.verdict.verdict, failed, runDir: res.runDir });
    o.write(
      `run ${i + 1}: ${res.verdict.verdict}${failed.length ? ` (${failed.join(', ')} failed)` : ''}  ${res.runDir}`,
    );
    if (failed.length === 0) continue;

    const stillFails = async (candidate: PlannedFault[]): Promise<boolean> => {
      const again = await o.runOne(exploreSuite(name, candidate, o), seed);
      return failedChecks(again).some((c) => failed.includes(c));
    };
    const shrunk = await shrinkSchedule(planned, stillFails, o.shrinkRuns, (m) => o.write(`  ${m}`));
    let confirmed = 0;
    for (let c = 0; c < o.confirmRuns; c++) {
      const ok = await stillFails(shrunk.planned);
      if (ok) confirmed++;
      o.write(`  confirm ${c + 1}/${o.confirmRuns}: ${ok ? 'fails again' : 'passed this time'}`);
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
    found.push(file);
    o.write(
      `  saved ${file} (${shrunk.planned.length} of ${planned.length} faults, ${shrunk.runs} shrink runs, confirmed ${confirmed}/${o.confirmRuns})`,
    );
  }
  return { runs, found, stoppedBy: 'runs' };
}
