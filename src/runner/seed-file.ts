// A seed file (seeds/*.json) is a failing experiment `limbo explore` found, as data: the seed,
// topology, workload, the shrunk schedule and the checks. `limbo run seeds/` replays each as a
// suite pinned to its seed, so CI keeps every bug explore ever found.
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

export function suiteFromSeedFile(seed: SeedFile, where: string): Suite & { seed: number } {
  if (seed?.kind !== 'limbo-seed' || seed.version !== 1)
    throw new UsageError(`${where}: not a limbo seed file (kind "limbo-seed", version 1)`);
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

export function readSeedFile(file: string): Suite & { seed: number } {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`${file}: cannot read seed file: ${messageOf(err)}`);
  }
  return suiteFromSeedFile(data as SeedFile, file);
}

export function writeSeedFile(dir: string, seed: SeedFile): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${seed.name}.json`);
  writeFileSync(file, JSON.stringify(seed, null, 2) + '\n');
  return file;
}
