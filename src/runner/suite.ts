// The suite API: a chaos suite is data that reads like the experiment it is —
// topology, workload, a fault schedule and the checks that must hold. `defineSuite` validates
// it (a bad suite is a UsageError naming what is wrong) and fills in the defaults.
import type { Checker } from '../checkers/checker.js';
import type { ScheduleEntry } from '../faults/schedule.js';
import type { Topology } from '../targets/target.js';
import { parseDurationMs, type Duration } from '../util/duration.js';
import { parseBugs, type BugName } from '../services/bugs.js';
import { UsageError } from '../util/errors.js';
import { checkWorkloadSpec, type WorkloadSpec } from '../workload/workload.js';

export interface SuiteSpec {
  name: string;
  /** Why this experiment exists, in one or two sentences. */
  why: string;
  topology?: Partial<Topology>;
  workload?: WorkloadSpec;
  schedule: ScheduleEntry[];
  expect: Checker[];
  /** Workload before the chaos starts (default 2s; 0 for clients-before-processors). */
  warmup?: Duration;
  /** Minimum chaos length; by default the schedule's last heal plus 1s. */
  chaos?: Duration;
  /** Bound on the wait for open ops after the final heal (default 10s). */
  converge?: Duration;
  /** Targets this suite is expected to fail on (documented, e.g. reference:legacy). */
  expectedToFailOn?: string[];
  /**
   * Bug switches (src/services/bugs.ts) this suite is built to catch: it is expected to fail
   * on `reference+bug:<x>` for each, and `limbo detect` runs it for them.
   */
  catches?: string[];
  /**
   * Targets on which the verdict depends on timing (documented in the suite file); with
   * --expect-documented, pass and fail are both accepted there.
   */
  timingDependentOn?: string[];
  /**
   * Targets this suite cannot run on, each with the reason (e.g. a link that target does not
   * have): the run is reported as skipped (inconclusive, with the reason), never as passed.
   */
  skipOn?: Record<string, string>;
  /** Targets this suite is written for (others skip it with `reason`), e.g. restate probes. */
  onlyOn?: { targets: string[]; reason: string };
}

export interface Suite extends Required<Pick<SuiteSpec, 'name' | 'why' | 'schedule' | 'expect'>> {
  readonly kind: 'limbo-suite';
  topology: Topology;
  workload: WorkloadSpec;
  warmupMs: number;
  chaosMs: number;
  convergeMs: number;
  expectedToFailOn: string[];
  catches: BugName[];
  timingDependentOn: string[];
  skipOn: Record<string, string>;
  onlyOn?: { targets: string[]; reason: string };
  /** A suite pinned to one seed (a seed file from `limbo explore`); it wins over --seed. */
  seed?: number;
}

/** Why the suite does not run on `target`, or undefined if it does. */
export function skipReasonFor(suite: Suite, target: string): string | undefined {
  if (suite.onlyOn !== undefined && !suite.onlyOn.targets.includes(target))
    return `only for ${suite.onlyOn.targets.join(', ')}: ${suite.onlyOn.reason}`;
  return suite.skipOn[target];
}

export function isSuite(x: unknown): x is Suite {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'limbo-suite';
}

export function defineSuite(spec: SuiteSpec): Suite {
  const where = `suite ${typeof spec?.name === 'string' ? spec.name : '(unnamed)'}`;
  if (typeof spec !== 'object' || spec === null) throw new UsageError('defineSuite needs an object');
  if (typeof spec.name !== 'string' || !/^[A-Za-z0-9._-]+$/.test(spec.name))
    throw new UsageError(`${where}: name must be letters, digits, '.', '_' or '-'`);
  if (typeof spec.why !== 'string' || spec.why.trim() === '')
    throw new UsageError(`${where}: say why (the 'why' field)`);
  if (!Array.isArray(spec.schedule))
    throw new UsageError(`${where}: schedule must be a list of at(...) entries`);
  for (const e of spec.schedule)
    if (typeof e?.fault?.inject !== 'function' || typeof e.atMs !== 'number')
      throw new UsageError(`${where}: every schedule entry must come from at(when, fault, { for })`);
  if (!Array.isArray(spec.expect) || spec.expect.length === 0)
    throw new UsageError(`${where}: expect at least one checker`);
  for (const c of spec.expect)
    if (typeof c?.check !== 'function')
      throw new UsageError(`${where}: every expect entry must be a checker`);
  // A bad give-up or burst option is named now, not at warm-up with the cluster already up.
  try {
    checkWorkloadSpec(spec.workload ?? {});
  } catch (err) {
    throw new UsageError(`${where}: workload: ${err instanceof Error ? err.message : String(err)}`);
  }
  const topology: Topology = { processors: 3, partitions: 4, ingresses: 1, ...spec.topology };
  if (!(topology.processors >= 1 && topology.partitions >= 1 && (topology.ingresses ?? 1) >= 1))
    throw new UsageError(`${where}: topology needs at least one processor, partition and ingress`);
  const clientsFirst = spec.schedule.some((e) => e.fault.name === 'clients-before-processors');
  const scheduleEnd = spec.schedule.reduce((end, e) => Math.max(end, e.atMs + (e.forMs ?? 0)), 0);
  return {
    kind: 'limbo-suite',
    name: spec.name,
    why: spec.why,
    topology,
    workload: { concurrency: 8, ...spec.workload },
    schedule: spec.schedule,
    expect: spec.expect,
    warmupMs: spec.warmup !== undefined ? parseDurationMs(spec.warmup) : clientsFirst ? 0 : 2000,
    chaosMs: Math.max(spec.chaos !== undefined ? parseDurationMs(spec.chaos) : 0, scheduleEnd + 1000),
    convergeMs: spec.converge !== undefined ? parseDurationMs(spec.converge) : 10_000,
    expectedToFailOn: spec.expectedToFailOn ?? [],
    catches: [...parseBugs(spec.catches, `${where}: catches`)],
    timingDependentOn: spec.timingDependentOn ?? [],
    skipOn: spec.skipOn ?? {},
    ...(spec.onlyOn !== undefined ? { onlyOn: spec.onlyOn } : {}),
  };
}
