// A seed file (seeds/*.json) is a failing experiment `limbo explore` found, as data: the seed,
// topology, workload, the shrunk schedule and the checks. `limbo run seeds/` replays each as a
// suite pinned to its seed, so CI keeps every bug explore ever found. `limbo replay --record`
// adds how often the seed reproduced its failure (replayRates, optional: older files load as
// before).
//
//   explore ─▶ SeedFile ─▶ seeds/<name>.json ─▶ load-suites ─▶ suiteFromSeedFile ─▶ runSuite
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { checkerFactory, checkerNames } from '../checkers/registry.js';
import type { Checker } from '../checkers/checker.js';
import { defineSuite, type Suite } from './suite.js';
import type { Topology } from '../targets/target.js';
import { UsageError, messageOf } from '../util/errors.js';
import type { WorkloadSpec } from '../workload/workload.js';
import { toScheduleEntries, type PlannedFault } from '../faults/planned.js';

export interface SeedCheck {
  name: string;
  options?: Record<string, unknown>;
}

export interface SeedFile {
  kind: 'limbo-seed';
  version: 1;
  name: string;
  why: string;
  /** The target explore found the failure on, and when. */
  foundOn: string;
  foundAt: string;
  seed: number;
  topology: Topology;
  workload: WorkloadSpec;
  chaosMs: number;
  convergeMs: number;
  schedule: PlannedFault[];
  expect: SeedCheck[];
  /** The checks that failed when it was found. */
  failed: string[];
  expectedToFailOn: string[];
  timingDependentOn: string[];
  /**
   * How often the seed reproduced its failure when replayed (`limbo replay --record`, or
   * explore's confirmations), one entry per target, newest measurement only. Optional: files
   * without it load as before.
   */
  replayRates?: ReplayRate[];
}

/** One measurement of a seed's replay fidelity on one target. */
export interface ReplayRate {
  target: string;
  /** Reruns whose verdict was fail with every check in `failed` failing again. */
  reproduced: number;
  runs: number;
  /** When it was measured (ISO 8601). */
  measuredAt: string;
}

export function isSeedFileName(file: string): boolean {
  return file.endsWith('.json');
}

/** The checkers named by a seed file's (or explore's) check list; an unknown name is a UsageError. */
export function checkersOf(checks: readonly SeedCheck[], where: string): Checker[] {
  return checks.map((c) => {
    const make = typeof c?.name === 'string' ? checkerFactory(c.name) : undefined;
    if (make === undefined)
      throw new UsageError(
        `${where}: unknown check ${JSON.stringify(c?.name)} (known: ${checkerNames().join(', ')})`,
      );
    return make(c.options);
  });
}

/** The measured rates of a seed file, checked; a malformed entry is a UsageError. */
export function replayRatesOf(seed: SeedFile, where: string): ReplayRate[] {
  const rates: unknown = seed.replayRates;
  if (rates === undefined) return [];
  if (!Array.isArray(rates)) throw new UsageError(`${where}: replayRates must be a list`);
  return rates.map((r: Partial<ReplayRate> | null, i) => {
    const ok =
      typeof r?.target === 'string' &&
      Number.isInteger(r.runs) &&
      Number.isInteger(r.reproduced) &&
      r.runs! >= 1 &&
      r.reproduced! >= 0 &&
      r.reproduced! <= r.runs! &&
      typeof r.measuredAt === 'string';
    if (!ok)
      throw new UsageError(
        `${where}: replayRates[${i}] must be { target, reproduced, runs, measuredAt } with 0 <= reproduced <= runs, runs >= 1`,
      );
    return r as ReplayRate;
  });
}

/** `rates` with `rate` in place of the entry for its target (one entry per target). */
export function withReplayRate(rates: readonly ReplayRate[], rate: ReplayRate): ReplayRate[] {
  return [...rates.filter((r) => r.target !== rate.target), rate].sort((a, b) =>
    a.target.localeCompare(b.target),
  );
}

export function suiteFromSeedFile(seed: SeedFile, where: string): Suite & { seed: number } {
  if (seed?.kind !== 'limbo-seed' || seed.version !== 1)
    throw new UsageError(`${where}: not a limbo seed file (kind "limbo-seed", version 1)`);
  replayRatesOf(seed, where);
  if (!Number.isInteger(seed.seed) || seed.seed < 0 || seed.seed > 0xffffffff)
    throw new UsageError(`${where}: seed must be an integer in 0..4294967295`);
  if (!Array.isArray(seed.schedule) || !Array.isArray(seed.expect))
    throw new UsageError(`${where}: schedule and expect must be lists`);
  let schedule;
  try {
    schedule = toScheduleEntries(seed.schedule);
  } catch (err) {
    throw new UsageError(`${where}: bad schedule: ${messageOf(err)}`);
  }
  const suite = defineSuite({
    name: seed.name,
    why: seed.why,
    topology: seed.topology,
    workload: seed.workload,
    schedule,
    expect: checkersOf(seed.expect, where),
    chaos: seed.chaosMs,
    converge: seed.convergeMs,
    expectedToFailOn: seed.expectedToFailOn ?? [],
    timingDependentOn: seed.timingDependentOn ?? [],
  });
  return { ...suite, seed: seed.seed };
}

function parseSeedFile(file: string): SeedFile {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as SeedFile;
  } catch (err) {
    throw new UsageError(`${file}: cannot read seed file: ${messageOf(err)}`);
  }
}

/** A seed file's data as written and the suite it replays as (a bad file is a UsageError). */
export function loadSeedFile(file: string): { data: SeedFile; suite: Suite & { seed: number } } {
  const data = parseSeedFile(file);
  return { data, suite: suiteFromSeedFile(data, file) };
}

export function readSeedFile(file: string): Suite & { seed: number } {
  return loadSeedFile(file).suite;
}

/**
 * Writes `rate` into the seed file at `file` (replacing the entry for its target), keeping
 * every other field as it was; returns the rates now recorded.
 */
export function recordReplayRate(file: string, rate: ReplayRate): ReplayRate[] {
  const { data } = loadSeedFile(file);
  const replayRates = withReplayRate(replayRatesOf(data, file), rate);
  writeFileSync(file, JSON.stringify({ ...data, replayRates }, null, 2) + '\n');
  return replayRates;
}

export function writeSeedFile(dir: string, seed: SeedFile): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${seed.name}.json`);
  writeFileSync(file, JSON.stringify(seed, null, 2) + '\n');
  return file;
}
