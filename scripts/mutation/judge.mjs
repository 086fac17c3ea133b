// The command StrykerJS's command runner runs for each mutant (stryker.config.mjs), in Stryker's
// sandbox (a copy of the checkout with the mutants placed in src/services and built by
// `npm run build`). Stryker names the active mutant in __STRYKER_ACTIVE_MUTANT__, which every
// process of a run inherits: the runner and each service it starts switch that mutant on.
//
// The judge looks the id up (LIMBO_MUTATION_IDS, written by plan-reporter.mjs) to find the
// sampled mutant (LIMBO_MUTATION_PLAN, written by run.mjs) and runs its suites one at a time
// with limbo's own runner: `limbo run chaos/<suite>.ts --target reference --seed S
// --expect-documented`. The first suite whose verdict is not the documented one (or whose run
// errors) kills the mutant: exit 1. Every suite as documented: exit 0, the mutant survived.
// A mutant Stryker placed that the driver did not sample (a sibling inside a sampled mutant's
// range) exits 0 at once; the driver leaves it out of the table. With no active mutant (Stryker's
// initial run) nothing runs: the unmutated suites are the coverage run's.
// Each judgement is a line of LIMBO_MUTATION_LOG (JSON): the suite, its exit and its verdict.
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { mutantKey } from './plan.mjs';

const id = process.env.__STRYKER_ACTIVE_MUTANT__;
if (id === undefined || id === '') process.exit(0);

const ids = JSON.parse(readFileSync(need('LIMBO_MUTATION_IDS'), 'utf8'));
const plan = JSON.parse(readFileSync(need('LIMBO_MUTATION_PLAN'), 'utf8'));
const log = need('LIMBO_MUTATION_LOG');

const placed = ids.find((m) => m.id === id);
if (placed === undefined) {
  process.stderr.write(`judge: mutant ${id} is not in ${process.env.LIMBO_MUTATION_IDS}\n`);
  process.exit(2);
}
const key = mutantKey(placed);
const sampled = plan.mutants.find((m) => m.key === key);
if (sampled === undefined) {
  record({ id, key, sampled: false });
  process.exit(0);
}

for (const { suite } of sampled.suites) {
  const out = join('runs-mutant', `${id}-${suite}`);
  const t0 = Date.now();
  const run = spawnSync(
    process.execPath,
    [
      'bin/limbo.js',
      'run',
      `chaos/${suite}.ts`,
      '--target',
      'reference',
      '--seed',
      String(plan.suiteSeed),
      '--expect-documented',
      '--out',
      out,
    ],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: process.env },
  );
  const text = `${run.stdout ?? ''}\n${run.stderr ?? ''}`;
  const verdict = text.split('\n').find((l) => /^\S+ \[reference\] seed \d+: /.test(l));
  const failing = text
    .split('\n')
    .filter((l) => /^\s+(fail|inconclusive)\s/.test(l))
    .slice(0, 3);
  const entry = {
    id,
    key,
    sampled: true,
    suite,
    exit: run.status,
    signal: run.signal,
    seconds: Math.round((Date.now() - t0) / 1000),
    verdict: verdict?.trim() ?? null,
    failing: failing.map((l) => l.trim()),
  };
  // No verdict line: the run errored; its last lines say how.
  if (verdict === undefined) entry.tail = text.trim().split('\n').slice(-6);
  record(entry);
  // A sandbox run directory is evidence only while the judge reads it.
  rmSync(out, { recursive: true, force: true });
  if (run.status !== 0) process.exit(1);
}
process.exit(0);

function need(name) {
  const v = process.env[name];
  if (v === undefined || v === '') {
    process.stderr.write(`judge: ${name} is not set (run through npm run mutation)\n`);
    process.exit(2);
  }
  return v;
}

function record(entry) {
  appendFileSync(log, `${JSON.stringify(entry)}\n`);
}
