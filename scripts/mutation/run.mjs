#!/usr/bin/env node
// The mutation score of the reference cluster (src/services) against limbo's chaos suites, with
// StrykerJS (docs/mutation.md). `npm run mutation -- [options]` builds, then:
//   1. enumerates Stryker's mutants of src/services/**.ts and samples --sample of them by --seed;
//   2. picks each mutant's suites from a coverage map (--coverage: the runs of
//      `limbo run chaos --coverage` at --suite-seed, made on demand when the folder holds none):
//      the suites whose run reached the mutant's line, at most --max-suites, most hits first.
//      A mutant no suite reached is "no coverage" and runs nothing;
//   3. runs Stryker (stryker.config.mjs) with the covered mutants' spots as --mutate ranges:
//      one sandbox build, then judge.mjs per mutant, which runs its suites and exits non-zero on
//      the first verdict that is not the documented one;
//   4. prints and writes (<out>/result.md, result.json) each mutant's outcome, the counts and
//      the score killed / (killed + survived + timeout), survivors by file:line.
//
//   options: --sample N (40) --seed S (1) --max-suites K (3) --coverage DIR (runs-mutation/coverage)
//            --suite-seed S (1) --out DIR (runs-mutation/sample-N-seed-S) --plan (stop after 2)
//            --mutant FILE:LINE:COL-LINE:COL (the mutants at that spot instead of a sample, to
//            rerun one; --mutator NAME narrows them to one mutator; --suites a,b judges them
//            by those suites instead of the coverage map's choice)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  coverageFiles,
  enumerateMutants,
  loadCoverage,
  mutantKey,
  mutateRange,
  oneLine,
  originalText,
  sampleMutants,
  suitesFor,
} from './plan.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
// A suite's run takes about half a minute here; this bounds one that a mutant leaves hanging
// beyond limbo's own bounds.
const perSuiteMs = 240_000;

const { values: o } = parseArgs({
  options: {
    sample: { type: 'string', default: '40' },
    seed: { type: 'string', default: '1' },
    'max-suites': { type: 'string', default: '3' },
    coverage: { type: 'string', default: 'runs-mutation/coverage' },
    'suite-seed': { type: 'string', default: '1' },
    out: { type: 'string' },
    plan: { type: 'boolean', default: false },
    mutant: { type: 'string' },
    mutator: { type: 'string' },
    suites: { type: 'string' },
  },
});
const sample = Number(o.sample);
const seed = Number(o.seed);
const maxSuites = Number(o['max-suites']);
const suiteSeed = Number(o['suite-seed']);
for (const [name, v] of Object.entries({ sample, seed, 'max-suites': maxSuites, 'suite-seed': suiteSeed }))
  if (!Number.isInteger(v) || v < 0) usage(`--${name} takes a whole number`);
const coverageDir = resolve(root, o.coverage);
const out = resolve(
  root,
  o.out ?? (o.mutant === undefined ? `runs-mutation/sample-${sample}-seed-${seed}` : 'runs-mutation/mutant'),
);

// 2. The coverage map, made when the folder holds none.
if (!existsSync(coverageDir) || coverageFiles(coverageDir).length === 0) {
  say(`no coverage map in ${o.coverage}: running every standard suite with --coverage at seed ${suiteSeed}`);
  spawnSync(
    process.execPath,
    [
      'bin/limbo.js',
      'run',
      'chaos',
      '--target',
      'reference',
      '--seed',
      String(suiteSeed),
      '--coverage',
      '--out',
      coverageDir,
    ],
    { cwd: root, stdio: 'inherit' },
  );
  if (!existsSync(coverageDir) || coverageFiles(coverageDir).length === 0)
    fail(`the coverage run left no coverage.json in ${coverageDir}`);
}
const coverage = loadCoverage(coverageDir);
for (const suite of [...coverage.keys()])
  if (!existsSync(join(root, 'chaos', `${suite}.ts`))) {
    say(`coverage of ${suite}: no chaos/${suite}.ts, left out`);
    coverage.delete(suite);
  }

// 1. The sample, with each mutant's suites.
const all = await enumerateMutants(root);
const picked =
  o.mutant === undefined
    ? sampleMutants(all, sample, seed)
    : all.filter(
        (m) => mutateRange(m) === o.mutant && (o.mutator === undefined || m.mutatorName === o.mutator),
      );
if (o.suites !== undefined && o.mutant === undefined) usage('--suites goes with --mutant');
for (const suite of o.suites?.split(',') ?? [])
  if (!existsSync(join(root, 'chaos', `${suite}.ts`))) usage(`--suites: no chaos/${suite}.ts`);
if (o.mutant !== undefined && picked.length === 0)
  usage(`no mutant at ${o.mutant}${o.mutator ? ` by ${o.mutator}` : ''}`);
const chosen = picked.map((m) => {
  const reached = suitesFor(m, coverage);
  const named = o.suites
    ?.split(',')
    .map((suite) => ({ suite, hits: reached.find((r) => r.suite === suite)?.hits ?? 0 }));
  return {
    ...m,
    key: mutantKey(m),
    range: mutateRange(m),
    original: originalText(root, m),
    reachedBy: reached.length,
    suites: named ?? reached.slice(0, maxSuites),
  };
});
const covered = chosen.filter((m) => m.suites.length > 0);
say(
  `${all.length} mutants in src/services; sample of ${chosen.length} (seed ${seed}): ${covered.length} reached by a suite of ${coverage.size} in ${o.coverage}, ${chosen.length - covered.length} no coverage`,
);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const files = {
  plan: join(out, 'plan.json'),
  ids: join(out, 'ids.json'),
  log: join(out, 'judged.jsonl'),
  report: join(out, 'stryker', 'mutation.json'),
};
writeFileSync(
  files.plan,
  JSON.stringify({ seed, sample, suiteSeed, maxSuites, coverage: o.coverage, mutants: chosen }, null, 1),
);
writeFileSync(files.log, '');
for (const m of chosen)
  say(
    `  ${m.range} ${m.mutatorName} -> ${oneLine(m.replacement, 40)}: ${m.suites.map((s) => s.suite).join(', ') || 'no coverage'}`,
  );
if (o.plan) process.exit(0);

// 3. Stryker over the covered mutants' spots.
if (covered.length > 0) {
  const t0 = Date.now();
  const stryker = spawnSync(
    process.execPath,
    [
      'node_modules/@stryker-mutator/core/bin/stryker.js',
      'run',
      'stryker.config.mjs',
      '--mutate',
      covered.map((m) => m.range).join(','),
      '--timeoutMS',
      String(maxSuites * perSuiteMs),
    ],
    {
      cwd: root,
      stdio: 'inherit',
      env: {
        ...process.env,
        LIMBO_MUTATION_PLAN: files.plan,
        LIMBO_MUTATION_IDS: files.ids,
        LIMBO_MUTATION_LOG: files.log,
        LIMBO_MUTATION_OUT: join(out, 'stryker'),
      },
    },
  );
  say(`stryker exited ${stryker.status} after ${Math.round((Date.now() - t0) / 60000)} min`);
  if (!existsSync(files.report)) fail(`Stryker wrote no report (${files.report})`);
}

// 4. Outcomes.
const statusById = new Map();
if (existsSync(files.report)) {
  const report = JSON.parse(readFileSync(files.report, 'utf8'));
  for (const f of Object.values(report.files)) for (const m of f.mutants) statusById.set(m.id, m.status);
}
const idByKey = new Map();
if (existsSync(files.ids))
  for (const m of JSON.parse(readFileSync(files.ids, 'utf8'))) idByKey.set(mutantKey(m), m.id);
const judged = readFileSync(files.log, 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => JSON.parse(l));

const results = chosen.map((m) => {
  const runs = judged.filter((j) => j.key === m.key && j.sampled);
  const base = { ...m, runs };
  if (m.suites.length === 0) return { ...base, outcome: 'no coverage' };
  const id = idByKey.get(m.key);
  const status = id === undefined ? undefined : statusById.get(id);
  if (status === 'Killed') {
    const by = runs.find((r) => r.exit !== 0);
    // Killed with no suite failing: the judge itself failed, which says nothing of the suites.
    return by === undefined ? { ...base, outcome: 'error', status } : { ...base, outcome: 'killed', by };
  }
  if (status === 'Survived') return { ...base, outcome: 'survived' };
  if (status === 'Timeout') return { ...base, outcome: 'timeout' };
  return { ...base, outcome: 'error', status: status ?? 'not run' };
});

const count = (k) => results.filter((r) => r.outcome === k).length;
const counts = Object.fromEntries(
  ['killed', 'survived', 'timeout', 'no coverage', 'error'].map((k) => [k, count(k)]),
);
const judgedCount = counts.killed + counts.survived + counts.timeout;
const score = judgedCount === 0 ? null : counts.killed / judgedCount;
writeFileSync(
  join(out, 'result.json'),
  JSON.stringify({ seed, sample, suiteSeed, maxSuites, counts, score, results }, null, 1),
);
const md = table();
writeFileSync(join(out, 'result.md'), md);
process.stdout.write(`\n${md}`);

function table() {
  const pct = score === null ? 'n/a' : `${(score * 100).toFixed(1)} %`;
  const lines = [
    `Sample of ${chosen.length} of ${all.length} mutants of src/services (seed ${seed}); suites at seed ${suiteSeed}, at most ${maxSuites} a mutant.`,
    '',
    '| outcome | mutants |',
    '| --- | --- |',
    ...Object.entries(counts).map(([k, v]) => `| ${k} | ${v} |`),
    `| **score** killed / (killed + survived + timeout) | **${counts.killed} / ${judgedCount} = ${pct}** |`,
    '',
    '| mutant | mutation | suites run | outcome |',
    '| --- | --- | --- | --- |',
    ...results.map((r) => {
      const where = `${r.file}:${r.location.start.line + 1}`;
      const what = `${r.mutatorName}: \`${cell(r.original)}\` → \`${cell(oneLine(r.replacement))}\``;
      const suites =
        r.runs.length > 0
          ? r.runs
              .map((j) => `${j.suite} (${j.exit === 0 ? 'as documented' : 'changed'}, ${j.seconds} s)`)
              .join(', ')
          : '—';
      const outcome =
        r.outcome === 'killed'
          ? `killed by ${r.by.suite}`
          : r.outcome === 'error'
            ? `error (${r.status})`
            : r.outcome;
      return `| ${where} | ${what} | ${suites} | ${outcome} |`;
    }),
    '',
    'Survivors:',
    ...results
      .filter((r) => r.outcome === 'survived')
      .map(
        (r) =>
          `- ${r.file}:${r.location.start.line + 1} ${r.mutatorName}: \`${r.original}\` → \`${oneLine(r.replacement)}\` (reached by ${r.reachedBy} suite(s))`,
      ),
    '',
  ];
  return lines.join('\n');
}

function cell(s) {
  return s.replace(/\|/g, '\\|').replace(/`/g, "'");
}

function say(s) {
  process.stdout.write(`mutation: ${s}\n`);
}

function fail(s) {
  process.stderr.write(`mutation: ${s}\n`);
  process.exit(1);
}

function usage(s) {
  process.stderr.write(`mutation: ${s}\n`);
  process.exit(2);
}
