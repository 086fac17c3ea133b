// Which of StrykerJS's mutants of the reference cluster (src/services/**) a mutation run judges,
// and by which chaos suites. Pure functions of the source tree and a coverage map, so the
// driver (run.mjs), the judge Stryker runs per mutant (judge.mjs) and the tests share them:
//   enumerateMutants: every mutant Stryker's own instrumenter makes of src/services/**.ts
//   sampleMutants:    a seeded sample of them (same seed and source, same sample)
//   loadCoverage:     per suite, the hit count of each line (the coverage.json of its run)
//   suitesFor:        the suites whose run reached a mutant (its first line, inside a function
//                     that ran), most hits first
//   mutateRange:      the `file:line:col-line:col` range that makes Stryker mutate that spot
import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { Instrumenter } from '@stryker-mutator/instrumenter';

export const servicesDir = 'src/services';

/** The TypeScript files of src/services, relative to root with '/' separators, sorted. */
export function servicesFiles(root) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = `${dir}/${name}`;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
    }
  };
  walk(servicesDir);
  return out;
}

// The instrumenter logs through Stryker's logger; a sampling run has nothing to say.
const quiet = {
  isTraceEnabled: () => false,
  isDebugEnabled: () => false,
  isInfoEnabled: () => false,
  isWarnEnabled: () => false,
  isErrorEnabled: () => false,
  isFatalEnabled: () => false,
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  fatal() {},
};

/**
 * Every mutant Stryker makes of `files` with its default mutators (as stryker.config.mjs
 * leaves them), except those a `// Stryker disable` comment ignores. Locations are Stryker's:
 * lines and columns from 0. The order is the instrumenter's (file, then source order).
 */
export async function enumerateMutants(root, files = servicesFiles(root)) {
  const input = files.map((file) => ({
    name: join(root, file),
    mutate: true,
    content: readFileSync(join(root, file), 'utf8'),
  }));
  const { mutants } = await new Instrumenter(quiet).instrument(input, {
    plugins: null,
    excludedMutations: [],
    ignorers: [],
  });
  return mutants
    .filter((m) => m.status !== 'Ignored')
    .map((m) => ({
      file: relative(root, m.fileName).split(sep).join('/'),
      location: m.location,
      mutatorName: m.mutatorName,
      replacement: m.replacement,
    }));
}

/** What identifies a mutant across Stryker runs: its spot, its mutator and its replacement. */
export function mutantKey(m) {
  return `${mutateRange(m)} ${m.mutatorName} ${m.replacement}`;
}

/** The range Stryker's `mutate` option takes for this mutant's spot (lines from 1, columns from 0). */
export function mutateRange(m) {
  const { start, end } = m.location;
  return `${m.file}:${start.line + 1}:${start.column}-${end.line + 1}:${end.column}`;
}

/** A small seeded generator (mulberry32): the same seed gives the same sequence on every Node. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `size` of `mutants` chosen by `seed` (a partial Fisher-Yates shuffle), in source order; all of
 * them when there are no more than `size`.
 */
export function sampleMutants(mutants, size, seed) {
  const next = random(seed);
  const index = mutants.map((_, i) => i);
  const k = Math.min(size, index.length);
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(next() * (index.length - i));
    [index[i], index[j]] = [index[j], index[i]];
  }
  return index
    .slice(0, k)
    .sort((a, b) => a - b)
    .map((i) => mutants[i]);
}

/**
 * Every coverage.json under dir (runs/<suite>/<time>/coverage.json). Symbolic links (the
 * `latest` link limbo keeps beside the suites) are not followed: a run counts once.
 */
export function coverageFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const st = lstatSync(path, { throwIfNoEntry: false });
      if (st === undefined) continue;
      if (st.isDirectory()) walk(path);
      else if (name === 'coverage.json') out.push(path);
    }
  };
  walk(dir);
  return out;
}

/**
 * Per suite, what its runs under dir reached of src/services: Map<suite, Map<file, { lines:
 * Map<line from 1, hits>, fns: [{ start, end, hits }] }>>, summed over the suite's runs. The
 * suite is the first directory of the run's path under dir, as `limbo run --out dir` lays them
 * out. Lines and columns are istanbul's (lines from 1, columns from 0).
 */
export function loadCoverage(dir) {
  const bySuite = new Map();
  for (const path of coverageFiles(dir)) {
    const suite = relative(dir, path).split(sep)[0];
    const map = JSON.parse(readFileSync(path, 'utf8'));
    const files = bySuite.get(suite) ?? new Map();
    bySuite.set(suite, files);
    for (const [file, fc] of Object.entries(map)) {
      if (!file.startsWith(`${servicesDir}/`)) continue;
      const seen = files.get(file) ?? { lines: new Map(), fns: [] };
      files.set(file, seen);
      for (const [id, loc] of Object.entries(fc.statementMap)) {
        const hits = fc.s[id] ?? 0;
        for (let line = loc.start.line; line <= loc.end.line; line++)
          seen.lines.set(line, (seen.lines.get(line) ?? 0) + hits);
      }
      for (const [id, fn] of Object.entries(fc.fnMap)) {
        const same = seen.fns.find(
          (f) => samePosition(f.start, fn.loc.start) && samePosition(f.end, fn.loc.end),
        );
        if (same !== undefined) same.hits += fc.f[id] ?? 0;
        else seen.fns.push({ start: fn.loc.start, end: fn.loc.end, hits: fc.f[id] ?? 0 });
      }
    }
  }
  return bySuite;
}

function samePosition(a, b) {
  return a.line === b.line && a.column === b.column;
}

function before(a, b) {
  return a.line < b.line || (a.line === b.line && a.column <= b.column);
}

/**
 * How often a suite's runs reached a mutant: the hits of its first line, or 0 when the
 * innermost function around its start never ran. The line alone would count a function's body
 * as reached whenever its declaration line ran (a module loading it), though no call ever did.
 */
export function hitsOf(mutant, seen) {
  if (seen === undefined) return 0;
  const at = { line: mutant.location.start.line + 1, column: mutant.location.start.column };
  const hits = seen.lines.get(at.line) ?? 0;
  if (hits === 0) return 0;
  let inner;
  for (const fn of seen.fns)
    if (before(fn.start, at) && before(at, fn.end) && (inner === undefined || before(inner.start, fn.start)))
      inner = fn;
  return inner !== undefined && inner.hits === 0 ? 0 : hits;
}

/**
 * The suites whose runs reached the mutant (hitsOf), as { suite, hits }, most hits first (then
 * by name): the ones likeliest to exercise the change come first. Empty: no coverage.
 */
export function suitesFor(mutant, coverage) {
  const out = [];
  for (const [suite, files] of coverage) {
    const hits = hitsOf(mutant, files.get(mutant.file));
    if (hits > 0) out.push({ suite, hits });
  }
  return out.sort((a, b) => b.hits - a.hits || a.suite.localeCompare(b.suite));
}

/** The source text a mutant replaces, on one line, for tables. */
export function originalText(root, m) {
  const lines = readFileSync(join(root, m.file), 'utf8').split('\n');
  const { start, end } = m.location;
  const text =
    start.line === end.line
      ? lines[start.line].slice(start.column, end.column)
      : [
          lines[start.line].slice(start.column),
          ...lines.slice(start.line + 1, end.line),
          lines[end.line].slice(0, end.column),
        ].join('\n');
  return oneLine(text);
}

/** Text squeezed onto one line and shortened, for a table cell. */
export function oneLine(text, max = 80) {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
