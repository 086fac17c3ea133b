// Writes the reference pages docs/reference/checks.md and docs/reference/faults.md: every
// registered check and fault with what its entry in checkers/check-docs.ts or
// faults/fault-docs.ts says, and the suites under chaos/ that use it (found by loading them:
// each suite's `expect` names its checks, its `schedule` its faults). Names and suites are
// sorted and the pages formatted with the repository's prettier settings, so the same code
// writes the same bytes; test/docs/reference-pages.test.ts fails when the committed pages
// differ from what this writes now.
//
//   checkerNames() + checkDocs ─┐
//   faultNames() + faultDocs ───┼─▶ referencePages() ─▶ docs/reference/{checks,faults}.md
//   chaos/**/*.ts (loadSuite) ──┘
//
//   npm run docs:reference      (builds, then runs this file from dist/)
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkDocs, type CheckDoc } from '../checkers/check-docs.js';
import { checkerNames } from '../checkers/registry.js';
import { faultDocs, type FaultDoc } from '../faults/fault-docs.js';
import { faultNames } from '../faults/registry.js';
import { loadSuite } from '../runner/load-suites.js';
import type { Suite } from '../runner/suite.js';

export const referenceCommand = 'npm run docs:reference';

/** The pages, relative to the repository root. */
export const referencePaths = {
  checks: 'docs/reference/checks.md',
  faults: 'docs/reference/faults.md',
} as const;

/** What one suite file uses, by registered name (and what it uses that is not registered). */
export interface SuiteUse {
  /** Relative to the repository root, e.g. `chaos/peers/leader-inbound-cut.ts`. */
  file: string;
  checks: string[];
  faults: string[];
  unregisteredChecks: string[];
  unregisteredFaults: string[];
}

export interface ReferencePage {
  /** Relative to the repository root. */
  path: string;
  text: string;
}

/** The repository root: the first folder above this file with a package.json. */
export function repoRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = resolve(from);
  for (let depth = 0; depth < 6; depth++) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  throw new Error(`no package.json above ${from}`);
}

/** The standard suite files: `chaos/*.ts` and `chaos/<folder>/*.ts`, sorted, relative to root. */
export function standardSuiteFiles(root: string): string[] {
  const isSuiteFile = (f: string): boolean =>
    /\.(ts|mts)$/.test(f) && !f.endsWith('.d.ts') && !f.endsWith('.test.ts');
  const out: string[] = [];
  const walk = (rel: string, depth: number): void => {
    for (const e of readdirSync(join(root, rel)).sort()) {
      const p = `${rel}/${e}`;
      if (statSync(join(root, p)).isDirectory()) {
        if (depth === 0) walk(p, 1);
      } else if (isSuiteFile(e)) out.push(p);
    }
  };
  walk('chaos', 0);
  return out.sort();
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The source without its comments (a name mentioned in a comment is not a use). */
function codeOf(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');
}

const calls = (code: string, name: string): boolean =>
  new RegExp(`(^|[^\\w.])${escapeRegExp(name)}\\s*\\(`).test(code);

/**
 * What a loaded suite uses. A check carries its registered name, except those a suite may
 * rename (`promql`, `traces`, given a `name`): a PromQL check is known by its query, and the
 * other renamed ones are the registered checks the file calls that no check of the suite
 * accounts for. A check whose name is not registered and that the file calls by that name, or
 * that no such call accounts for, is the suite's own: listed as not registered.
 */
export function suiteUse(
  file: string,
  source: string,
  suite: Pick<Suite, 'expect' | 'schedule'>,
  checks: ReadonlySet<string>,
  faults: ReadonlySet<string>,
): SuiteUse {
  const code = codeOf(source);
  const usedChecks = new Set<string>();
  const unregisteredChecks = new Set<string>();
  const renamed: string[] = [];
  for (const c of suite.expect) {
    if (checks.has(c.name)) usedChecks.add(c.name);
    else if (c.promql !== undefined && checks.has('promql')) usedChecks.add('promql');
    else if (calls(code, c.name)) unregisteredChecks.add(c.name);
    else renamed.push(c.name);
  }
  // Registered checks the file calls that no check accounts for: what the renamed ones are.
  const unaccounted = [...checks].filter((n) => !usedChecks.has(n) && calls(code, n));
  if (renamed.length > 0) {
    if (unaccounted.length > 0) for (const n of unaccounted) usedChecks.add(n);
    else for (const n of renamed) unregisteredChecks.add(n);
  }
  const usedFaults = new Set<string>();
  const unregisteredFaults = new Set<string>();
  for (const e of suite.schedule)
    (faults.has(e.fault.name) ? usedFaults : unregisteredFaults).add(e.fault.name);
  const sorted = (s: Set<string>): string[] => [...s].sort();
  return {
    file,
    checks: sorted(usedChecks),
    faults: sorted(usedFaults),
    unregisteredChecks: sorted(unregisteredChecks),
    unregisteredFaults: sorted(unregisteredFaults),
  };
}

/** Loads every standard suite and says what it uses. */
export async function standardSuiteUses(root: string = repoRoot()): Promise<SuiteUse[]> {
  const checks = new Set(checkerNames());
  const faults = new Set(faultNames());
  const out: SuiteUse[] = [];
  for (const file of standardSuiteFiles(root)) {
    const abs = join(root, file);
    const { suite } = await loadSuite(abs);
    out.push(suiteUse(file, readFileSync(abs, 'utf8'), suite, checks, faults));
  }
  return out;
}

/** GitHub's anchor of a heading that is one code span: its text, lower-cased. */
export function anchorOf(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_ -]/g, '')
    .replace(/ /g, '-');
}

/** A link to a suite file from docs/reference/, labelled by its path under chaos/. */
function suiteLink(file: string): string {
  return `[${file.replace(/^chaos\//, '').replace(/\.m?ts$/, '')}](../../${file})`;
}

function usedBy(files: readonly string[], what: string): string {
  if (files.length === 0) return `**Used by:** no suite in \`chaos/\` names this ${what}.`;
  return `**Used by** ${files.length} ${files.length === 1 ? 'suite' : 'suites'}: ${files.map(suiteLink).join(', ')}.`;
}

function bullets(entries: Readonly<Record<string, string>>): string {
  return Object.entries(entries)
    .map(([k, v]) => `- \`${k}\`: ${v}`)
    .join('\n');
}

function generatedNote(entries: string, registry: string): string {
  return [
    `<!-- Generated by \`${referenceCommand}\`: edit ${entries}, not this file. -->`,
    '',
    `Generated by \`${referenceCommand}\` from ${entries}, the ${registry} and the suites in \`chaos/\`; do not edit it by hand. A test (\`test/docs/reference-pages.test.ts\`) fails when this page is stale, when something registered has no entry, or when an entry names nothing registered.`,
  ].join('\n');
}

function index(names: readonly string[]): string {
  return names.map((n) => `[\`${n}\`](#${anchorOf(n)})`).join(' · ');
}

export function renderChecksPage(
  names: readonly string[],
  docs: Readonly<Record<string, CheckDoc>>,
  uses: readonly SuiteUse[],
): string {
  const sorted = [...names].sort();
  const parts = [
    '# Checks',
    generatedNote('`src/checkers/check-docs.ts`', 'checker registry (`src/checkers/registry.ts`)'),
    'Every check registered by name: suites call it, and seed files and `limbo explore` name it. A check is a pure function of the run’s data and answers pass, fail or inconclusive with evidence; a suite is green only when every check passed. Verdicts combine as fail, then inconclusive, then pass. A check whose signals the target lacks is skipped with the reason, never passed; a check whose premise the run’s faults do not meet (failover with no fault on a processor) is not applicable: skipped with the run’s faults as the reason. Skipped checks count for nothing, neither pass nor inconclusive. How to use them in a suite: [writing-suites.md](../writing-suites.md#checks); the faults: [faults.md](faults.md).',
    index(sorted),
  ];
  for (const name of sorted) {
    const d = docs[name];
    if (d === undefined) throw new Error(`check ${name} has no entry in src/checkers/check-docs.ts`);
    const users = uses.filter((u) => u.checks.includes(name)).map((u) => u.file);
    parts.push(
      `## \`${name}\``,
      `**Premise.** ${d.premise}`,
      `**Evidence.** ${d.evidence}`,
      `**Inconclusive when.** ${d.inconclusiveWhen}`,
      `**See it fail.** ${d.seeItFail}`,
      ...(d.options !== undefined && Object.keys(d.options).length > 0
        ? ['**Options:**', bullets(d.options)]
        : []),
      ...(d.addedBy !== undefined ? [`**Added without being named:** by ${d.addedBy}.`] : []),
      usedBy(users, 'check'),
    );
  }
  const unregistered = unregisteredSection(
    uses,
    (u) => u.unregisteredChecks,
    'Checks the suites use that are not registered',
    'These are not registered by name (`registerChecker`), so seed files and `limbo explore` cannot name them, and they have no entry above.',
  );
  if (unregistered !== undefined) parts.push(unregistered);
  return `${parts.join('\n\n')}\n`;
}

export function renderFaultsPage(
  names: readonly string[],
  docs: Readonly<Record<string, FaultDoc>>,
  uses: readonly SuiteUse[],
): string {
  const sorted = [...names].sort();
  const parts = [
    '# Faults',
    generatedNote('`src/faults/fault-docs.ts`', 'fault registry (`src/faults/registry.ts`)'),
    'Every fault registered by name. A fault is an inject with its heal; the schedule heals every fault still in when the chaos phase ends. Parameters are given by name as data, as a seed file does (`{ "fault": "latency", "params": { "on": "ingress->processor-1", "latencyMs": 500 } }`); a suite file calls the helper instead. Each fault carries its own evidence of what it met, and `faultsHitTraffic` makes a run with a fault that met nothing inconclusive ([What proves a fault landed](../writing-suites.md#what-proves-a-fault-landed)). The checks: [checks.md](checks.md).',
    index(sorted),
  ];
  for (const name of sorted) {
    const d = docs[name];
    if (d === undefined) throw new Error(`fault ${name} has no entry in src/faults/fault-docs.ts`);
    const users = uses.filter((u) => u.faults.includes(name)).map((u) => u.file);
    parts.push(
      `## \`${name}\``,
      `**In a suite:** ${d.helper}`,
      `**What it does.** ${d.does}`,
      ...(Object.keys(d.parameters).length > 0
        ? ['**Parameters:**', bullets(d.parameters)]
        : ['**Parameters:** none.']),
      `**Heal.** ${d.heal}`,
      `**Landed when.** ${d.landedWhen}`,
      usedBy(users, 'fault'),
    );
  }
  const unregistered = unregisteredSection(
    uses,
    (u) => u.unregisteredFaults,
    'Faults the suites use that are not registered',
    'These are not registered by name (`registerFault`), so seed files and `limbo explore` cannot name them, and they have no entry above.',
  );
  if (unregistered !== undefined) parts.push(unregistered);
  return `${parts.join('\n\n')}\n`;
}

function unregisteredSection(
  uses: readonly SuiteUse[],
  of: (u: SuiteUse) => readonly string[],
  title: string,
  why: string,
): string | undefined {
  const byName = new Map<string, string[]>();
  for (const u of uses)
    for (const n of of(u)) {
      const list = byName.get(n);
      if (list === undefined) byName.set(n, [u.file]);
      else list.push(u.file);
    }
  if (byName.size === 0) return undefined;
  const rows = [...byName.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([n, files]) => `- \`${n}\`: ${files.map(suiteLink).join(', ')}`);
  return [`## ${title}`, why, rows.join('\n')].join('\n\n');
}

/** Formats Markdown as `prettier --write` would in this repository. */
async function formatMarkdown(text: string, path: string): Promise<string> {
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(path)) ?? {};
  return prettier.format(text, { ...options, filepath: path });
}

/**
 * What the registries and the entries disagree on: a registered name without an entry, an
 * entry for a name nothing registers. Empty when they agree.
 */
export function referenceGaps(
  registered: { checks: readonly string[]; faults: readonly string[] } = {
    checks: checkerNames(),
    faults: faultNames(),
  },
  docs: { checks: object; faults: object } = { checks: checkDocs, faults: faultDocs },
): string[] {
  const gaps = (kind: string, names: readonly string[], entries: object, file: string): string[] => {
    const known = new Set(names);
    return [
      ...names
        .filter((n) => !Object.hasOwn(entries, n))
        .map((n) => `${kind} ${n} is registered but has no entry in ${file}`),
      ...Object.keys(entries)
        .filter((n) => !known.has(n))
        .map((n) => `${file} has an entry for ${kind} ${n}, which is not registered`),
    ];
  };
  return [
    ...gaps('check', registered.checks, docs.checks, 'src/checkers/check-docs.ts'),
    ...gaps('fault', registered.faults, docs.faults, 'src/faults/fault-docs.ts'),
  ];
}

/** The pages as they should be now (an error naming every gap between registries and entries). */
export async function referencePages(root: string = repoRoot()): Promise<ReferencePage[]> {
  const gaps = referenceGaps();
  if (gaps.length > 0) throw new Error(gaps.join('; '));
  const uses = await standardSuiteUses(root);
  const pages = [
    { path: referencePaths.checks, text: renderChecksPage(checkerNames(), checkDocs, uses) },
    { path: referencePaths.faults, text: renderFaultsPage(faultNames(), faultDocs, uses) },
  ];
  const out: ReferencePage[] = [];
  for (const p of pages) out.push({ path: p.path, text: await formatMarkdown(p.text, join(root, p.path)) });
  return out;
}

export async function writeReferencePages(root: string = repoRoot()): Promise<string[]> {
  const written: string[] = [];
  for (const p of await referencePages(root)) {
    const abs = join(root, p.path);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, p.text);
    written.push(p.path);
  }
  return written;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const path of await writeReferencePages()) console.log(`wrote ${path}`);
}
