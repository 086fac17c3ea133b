// The reference pages cover exactly what is registered: every registered check and fault has
// an entry (src/checkers/check-docs.ts, src/faults/fault-docs.ts) and a section, no entry or
// section names something not registered, what the entries point at exists, and the
// committed docs/reference/*.md are what `npm run docs:reference` writes now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkDocs } from '../../src/checkers/check-docs.js';
import { checkerNames } from '../../src/checkers/registry.js';
import { faultDocs } from '../../src/faults/fault-docs.js';
import { faultNames } from '../../src/faults/registry.js';
import { bugNames } from '../../src/services/bugs.js';
import { targetNames } from '../../src/targets/registry.js';
import {
  referenceCommand,
  referenceGaps,
  referencePages,
  referencePaths,
  renderChecksPage,
  renderFaultsPage,
  repoRoot,
  suiteUse,
} from '../../src/cli/reference-docs.js';
import type { Checker } from '../../src/checkers/checker.js';
import type { Fault } from '../../src/faults/fault.js';
import type { ScheduleEntry } from '../../src/faults/schedule.js';

const root = repoRoot();
const stale = `stale: run \`${referenceCommand}\` and commit docs/reference/`;

test('every registered check has an entry, and every entry names a registered check', () => {
  assert.deepEqual(
    referenceGaps().filter((g) => g.includes('check-docs.ts')),
    [],
  );
  assert.deepEqual(Object.keys(checkDocs).sort(), checkerNames());
});

test('every registered fault has an entry, and every entry names a registered fault', () => {
  assert.deepEqual(
    referenceGaps().filter((g) => g.includes('fault-docs.ts')),
    [],
  );
  assert.deepEqual(Object.keys(faultDocs).sort(), faultNames());
});

test('the gaps are named both ways, and no page is written with one', () => {
  const gaps = referenceGaps(
    {
      checks: [...Object.keys(checkDocs), 'newCheck'],
      faults: Object.keys(faultDocs).filter((n) => n !== 'kill'),
    },
    { checks: { ...checkDocs, goneCheck: checkDocs['exactlyOnce']! }, faults: faultDocs },
  );
  assert.deepEqual(gaps, [
    'check newCheck is registered but has no entry in src/checkers/check-docs.ts',
    'src/checkers/check-docs.ts has an entry for check goneCheck, which is not registered',
    'src/faults/fault-docs.ts has an entry for fault kill, which is not registered',
  ]);
  assert.throws(() => renderChecksPage([...Object.keys(checkDocs), 'newCheck'], checkDocs, []), /newCheck/);
  assert.throws(() => renderFaultsPage([...Object.keys(faultDocs), 'new-fault'], faultDocs, []), /new-fault/);
});

test('every entry fills in every field', () => {
  for (const [name, d] of Object.entries(checkDocs))
    for (const field of ['premise', 'evidence', 'inconclusiveWhen', 'seeItFail'] as const)
      assert.ok(d[field].trim().length > 20, `check ${name}: ${field} says something`);
  for (const [name, d] of Object.entries(faultDocs)) {
    for (const field of ['helper', 'does', 'heal', 'landedWhen'] as const)
      assert.ok(d[field].trim().length > 5, `fault ${name}: ${field} says something`);
    for (const [p, text] of Object.entries(d.parameters))
      assert.ok(text.trim().length > 5, `fault ${name}: parameter ${p} says something`);
  }
});

test('what the entries point at exists: suite files, bug switches, targets', () => {
  const texts = [
    ...Object.entries(checkDocs).map(([n, d]) => [`check ${n}`, JSON.stringify(d)] as const),
    ...Object.entries(faultDocs).map(([n, d]) => [`fault ${n}`, JSON.stringify(d)] as const),
  ];
  const bugs = new Set<string>(bugNames);
  const targets = new Set<string>(targetNames());
  let pointers = 0;
  for (const [who, text] of texts) {
    for (const m of text.matchAll(/chaos\/[\w/.-]+\.ts/g)) {
      pointers++;
      assert.ok(existsSync(join(root, m[0])), `${who} names ${m[0]}, which does not exist`);
    }
    for (const m of text.matchAll(/reference\+bug:([\w,-]+)/g))
      for (const b of m[1]!.split(',')) {
        pointers++;
        assert.ok(bugs.has(b), `${who} names bug switch ${b}, which is not in src/services/bugs.ts`);
      }
    for (const m of text.matchAll(/--target ([\w:+,-]+)/g)) {
      pointers++;
      const base = m[1]!.split('+')[0]!;
      assert.ok(targets.has(base), `${who} names target ${base}, which is not registered`);
    }
  }
  assert.ok(pointers > 20, `the entries point at suites, switches and targets (${pointers} found)`);
});

test('each page has one section per registered name, and none for anything else', () => {
  const sections = (path: string): string[] => {
    const text = readFileSync(join(root, path), 'utf8');
    const top = text.split(/\n## (?:Checks|Faults) the suites use that are not registered\n/)[0]!;
    return [...top.matchAll(/^## `([^`]+)`$/gm)].map((m) => m[1]!);
  };
  assert.deepEqual(sections(referencePaths.checks), checkerNames(), `checks.md sections; ${stale}`);
  assert.deepEqual(sections(referencePaths.faults), faultNames(), `faults.md sections; ${stale}`);
});

test('the committed pages are what the generator writes now', async () => {
  const pages = await referencePages(root);
  assert.deepEqual(
    pages.map((p) => p.path),
    [referencePaths.checks, referencePaths.faults],
  );
  for (const p of pages) {
    const path = join(root, p.path);
    assert.ok(existsSync(path), `${p.path} is missing: run \`${referenceCommand}\``);
    assert.equal(readFileSync(path, 'utf8'), p.text, `${p.path} is ${stale}`);
    assert.match(p.text, new RegExp(`Generated by \`${referenceCommand}\``), `${p.path} says how it is made`);
  }
  // The standard suites are found: the checks every suite names have users.
  assert.match(pages[0]!.text, /## `noClientLeftHanging`[\s\S]*?\*\*Used by\*\* \d+ suites: /);
  assert.match(pages[1]!.text, /## `kill`[\s\S]*?\*\*Used by\*\* \d+ suites: /);
});

test('suiteUse names each check and fault by its registered name', () => {
  const checker = (name: string, extra: Partial<Checker> = {}): Checker => ({
    name,
    check: () => ({ name, verdict: 'pass', summary: '', evidence: { details: {} } }),
    ...extra,
  });
  const entry = (name: string): ScheduleEntry => ({ atMs: 0, forMs: 1, fault: { name } as Fault });
  const source = [
    '// exactlyOnce() and resendsObserved() in a comment are no use of either',
    'expect: [noClientLeftHanging(), promql({ name: "drained", query: "x", expect: "empty" }),',
    '  traces({ name: "appendsTraced", select: {}, expect: {} }), myLeadership() ],',
  ].join('\n');
  const use = suiteUse(
    'chaos/x.ts',
    source,
    {
      expect: [
        checker('noClientLeftHanging'),
        checker('drained', { promql: { query: 'x', at: 'end' } }),
        checker('appendsTraced'),
        checker('myLeadership'),
      ],
      schedule: [entry('kill'), entry('timeout'), entry('kill'), entry('my-fault')],
    },
    new Set(checkerNames()),
    new Set(faultNames()),
  );
  assert.deepEqual(use, {
    file: 'chaos/x.ts',
    checks: ['noClientLeftHanging', 'promql', 'traces'],
    faults: ['kill', 'timeout'],
    unregisteredChecks: ['myLeadership'],
    unregisteredFaults: ['my-fault'],
  });
  // A check of the suite's own, made by a local function no registered name accounts for.
  const own = suiteUse(
    'chaos/y.ts',
    'const mine = makeMine();\nexpect: [exactlyOnce(), mine]',
    { expect: [checker('exactlyOnce'), checker('mineChecked')], schedule: [] },
    new Set(checkerNames()),
    new Set(faultNames()),
  );
  assert.deepEqual(own.checks, ['exactlyOnce']);
  assert.deepEqual(own.unregisteredChecks, ['mineChecked']);
});
