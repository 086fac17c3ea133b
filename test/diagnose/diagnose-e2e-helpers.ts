// What the diagnosis end-to-end tests share: run a suite on real processes and read the
// diagnosis of its verdict, the group a check's JUnit failure leads with, and the fault it names.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { escapeXml } from '../../src/report/junit.js';
import { runFiles } from '../../src/run-data/files.js';
import type { DiagnosisGroup, VerdictFile } from '../../src/run-data/verdict.js';
import { loadSuite } from '../../src/runner/load-suites.js';
import { runSuite } from '../../src/runner/run-suite.js';
import type { Suite } from '../../src/runner/suite.js';
import { createTarget } from '../../src/targets/registry.js';

export interface Ran {
  verdict: VerdictFile;
  junit: string;
}

export async function run(target: string, suite: Suite, seed: number): Promise<Ran> {
  const out = mkdtempSync(join(tmpdir(), 'limbo-diagnose-'));
  try {
    const res = await runSuite(suite, { target: createTarget(target), seed, outRoot: out, replay: 'test' });
    return { verdict: res.verdict, junit: readFileSync(join(res.runDir, runFiles.junit), 'utf8') };
  } finally {
    // LIMBO_KEEP_RUNS=1 keeps the run directories to read (their path is printed).
    if (process.env['LIMBO_KEEP_RUNS'] === '1') console.log(`  run kept in ${out}`);
    else rmSync(out, { recursive: true, force: true });
  }
}

/** A standard suite of chaos/ by file name. */
export async function chaosSuite(file: string): Promise<Suite> {
  return (await loadSuite(join(process.cwd(), 'chaos', file))).suite;
}

/**
 * A switch shows only when a fault meets its moment: a few fixed seeds, until a check names an
 * op (with `check`: until that check named one, or gave a finding that names no op).
 */
export async function runUntilDiagnosed(
  target: string,
  suite: Suite,
  seeds: readonly number[],
  check?: string,
): Promise<Ran> {
  let ran: Ran | undefined;
  for (const seed of seeds) {
    ran = await run(target, suite, seed);
    const d = ran.verdict.diagnosis;
    if (
      d !== undefined &&
      (check === undefined ||
        d.groups.some((g) => g.checks.includes(check)) ||
        d.findings?.some((f) => f.check === check) === true)
    )
      break;
  }
  return ran!;
}

/**
 * The largest group among the ops `check` (the check that catches the bug) named: the group its
 * JUnit failure leads with. Other checks may name other ops (serviceLevels, held on every run,
 * names every slow op), and their groups may be larger.
 */
export function topGroup(ran: Ran, check: string): DiagnosisGroup {
  const d = ran.verdict.diagnosis;
  assert.ok(
    d,
    `a diagnosis: ${ran.verdict.checks.map((c) => `${c.name} ${c.verdict}: ${c.summary}`).join('\n')}`,
  );
  for (const g of d.groups.slice(0, 3)) console.log(`  ${g.sentence}`);
  assert.equal(d.traced, true);
  const top = d.groups.find((g) => g.checks.includes(check));
  assert.ok(top, `a group of ops ${check} named: ${JSON.stringify(d.groups.map((g) => [g.key, g.checks]))}`);
  console.log(`  ${check}: ${top.sentence}`);
  // The JUnit failure of that check starts with the diagnosis.
  const failure = new RegExp(`<testcase name="${check}"[^>]*>\\s*<failure message="why: ([^"]*)"`).exec(
    ran.junit,
  );
  assert.ok(failure, ran.junit);
  assert.ok(failure[1]!.startsWith(escapeXml(top.sentence)), failure[1]);
  return top;
}

/** The group names a fault matching `fault`, in its faults and in its sentence. */
export function namesFault(g: DiagnosisGroup, fault: RegExp): void {
  const named = g.faults.find((f) => fault.test(f.name));
  assert.ok(named, `fault ${String(fault)} in ${JSON.stringify(g.faults)}`);
  assert.ok(g.sentence.includes(named.name), g.sentence);
}
