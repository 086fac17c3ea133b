// The reasons file for unreached branch arms and the coverage goal: a reason explains the arm
// of its file, kind and arm number whose source text it quotes (found again when the line
// moves), a reason for an arm now reached or gone is stale, the goal needs both the branch
// share and every arm explained, and `limbo coverage --goal` exits by it. The maps are small
// hand-written istanbul maps over a real source file (its lines are read), in run directories
// read by the real command.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type libCoverage from 'istanbul-lib-coverage';
import { packageRoot } from '../../src/coverage/collect.js';
import { judgeCoverage, mergeCoverage, unreachedBranches } from '../../src/coverage/map.js';
import { matchReasons, parseReasons, reasonLine } from '../../src/coverage/reasons.js';
import { runFiles } from '../../src/run-data/files.js';
import { limboSync } from '../helpers/limbo-cli.js';

const FILE = 'src/services/log/controller.ts';
const source = readFileSync(join(packageRoot, FILE), 'utf8').split('\n');
const lineOf = (match: RegExp): number => {
  const n = source.findIndex((l) => match.test(l)) + 1;
  assert.ok(n > 0, String(match));
  return n;
};
const errorLine = lineOf(/heartbeat needs a node name/);
const plainLine = lineOf(/^export class /);
const textOf = (line: number): string => source[line - 1]!.trim();
const loc = (line: number) => ({ start: { line, column: 0 }, end: { line, column: 10 } });

/** Two if-branches of FILE (an error path and a plain one) with the arms' counts given. */
function coverage(errorArms: [number, number], plainArms: [number, number]): libCoverage.CoverageMapData {
  return {
    [FILE]: {
      path: FILE,
      statementMap: { '0': loc(errorLine) },
      fnMap: {},
      branchMap: {
        '0': {
          loc: loc(errorLine),
          type: 'if',
          locations: [loc(errorLine), loc(errorLine)],
          line: errorLine,
        },
        '1': {
          loc: loc(plainLine),
          type: 'if',
          locations: [loc(plainLine), loc(plainLine)],
          line: plainLine,
        },
      },
      s: { '0': 1 },
      f: {},
      b: { '0': errorArms, '1': plainArms },
    },
  };
}

function runDir(data: libCoverage.CoverageMapData): { root: string; file: string } {
  const root = mkdtempSync(join(tmpdir(), 'limbo-coverage-reasons-'));
  const dir = join(root, 'suite', '2026-01-01T00-00-00.000Z');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, runFiles.coverage);
  writeFileSync(file, JSON.stringify(data));
  return { root, file };
}

test('a reason explains the arm whose text it quotes, also after the line moved; others are stale', () => {
  const { root, file } = runDir(coverage([0, 0], [3, 0]));
  try {
    const unreached = unreachedBranches(mergeCoverage([file]), 'src/services/');
    assert.equal(unreached.length, 3);
    const reasons = parseReasons(
      [
        '# comments and blank lines are skipped',
        '',
        // Recorded 7 lines off: the text finds it.
        `${FILE}:${errorLine + 7}  if[0]  ${textOf(errorLine)}  ::  a node always names itself`,
        // Arm 1 of the plain branch is unreached: explained.
        `${FILE}:${plainLine}  if[1]  ${textOf(plainLine)}  ::  the class is always built`,
        // Arm 0 of the plain branch was reached: stale.
        `${FILE}:${plainLine}  if[0]  ${textOf(plainLine)}  ::  reached now`,
        // Text that is no longer there: stale.
        `${FILE}:${errorLine}  if[1]  throw new Error('gone');  ::  the code changed`,
      ].join('\n'),
    );
    const { explained, unexplained, stale } = matchReasons(unreached, reasons);
    assert.deepEqual(
      explained.map((e) => [e.arm.line, e.arm.arm, e.reason.reason]),
      [
        [errorLine, 0, 'a node always names itself'],
        [plainLine, 1, 'the class is always built'],
      ].sort((a, b) => Number(a[0]) - Number(b[0])),
    );
    assert.deepEqual(
      unexplained.map((u) => [u.line, u.arm]),
      [[errorLine, 1]],
    );
    assert.deepEqual(
      stale.map((r) => r.at),
      [5, 6],
    );
    // The line printed for an unexplained arm reads back once its reason is written.
    const line = reasonLine(unexplained[0]!);
    assert.throws(() => parseReasons(line), /expected '<file>:<line>/);
    const written = parseReasons(`${line} the config forbids it`);
    assert.equal(matchReasons(unexplained, written).explained.length, 1);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the goal needs the branch share and every unreached arm explained, none a gap, none stale', () => {
  const { root, file } = runDir(coverage([0, 0], [3, 0]));
  try {
    const map = mergeCoverage([file]);
    const all = unreachedBranches(map, 'src/services/').map(
      (u) => parseReasons(`${reasonLine(u)} because`)[0]!,
    );
    // 1 of 4 branches reached.
    const low = judgeCoverage(map, 'src/services/', 1, 10, { reasons: all, goalPct: 30 });
    assert.equal(low.goal?.met, false);
    assert.match(low.text, /^goal NOT met: branches 25\.0% < 30%$/m);
    const met = judgeCoverage(map, 'src/services/', 1, 10, { reasons: all, goalPct: 25 });
    assert.equal(met.goal?.met, true, met.text);
    assert.match(
      met.text,
      /^3 branch arm\(s\) no run took, 3 with a reason in the reasons file, 0 listed there as gaps; 0 with neither/m,
    );
    // A known gap keeps its arm (not stale) but does not meet the goal.
    const gap = parseReasons(
      `${reasonLine(unreachedBranches(map, 'src/services/')[0]!)} gap: no suite fails a heartbeat`,
    );
    const withGap = judgeCoverage(map, 'src/services/', 1, 10, {
      reasons: [...gap, ...all.slice(1)],
      goalPct: 25,
    });
    assert.equal(withGap.goal?.met, false);
    assert.equal(withGap.goal?.stale, 0);
    assert.match(withGap.text, /^goal NOT met: 1 known gap\(s\) no suite reaches yet$/m);
    assert.match(withGap.text, /^1 known gap\(s\): situations a suite could create and none does yet:$/m);
    assert.match(
      withGap.text,
      new RegExp(
        `^  ${FILE.replace(/\//g, '\\/')}:${errorLine} \\S+\\[0\\]  no suite fails a heartbeat$`,
        'm',
      ),
    );
    const missing = judgeCoverage(map, 'src/services/', 1, 10, { reasons: all.slice(1), goalPct: 25 });
    assert.equal(missing.goal?.met, false);
    assert.match(missing.text, /^goal NOT met: 1 unreached arm\(s\) without a reason$/m);
    // A reason for an arm now reached makes the goal wait for the file to be put right.
    const after = runDir(coverage([1, 1], [3, 1]));
    const reached = judgeCoverage(mergeCoverage([after.file]), 'src/services/', 1, 10, {
      reasons: all,
      goalPct: 25,
    });
    assert.equal(reached.goal?.met, false);
    assert.match(reached.text, /^3 reason\(s\) match no unreached arm/m);
    rmSync(after.root, { recursive: true, force: true });
    // Without a goal, nothing is judged.
    assert.equal(judgeCoverage(map, 'src/services/', 1, 10, { reasons: all }).goal, undefined);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('limbo coverage --reasons --goal: exit 1 short of the goal, 0 when met; a bad reasons file exits 2 naming its line', () => {
  const { root, file } = runDir(coverage([0, 0], [3, 0]));
  try {
    const map = mergeCoverage([file]);
    const reasons = join(root, 'reasons.txt');
    const limbo = (...args: string[]) => limboSync(['coverage', root, ...args], 60_000);
    // No reasons: the lines to write are printed, and the goal is not met.
    const lines = limbo('--reasons', 'none', '--reason-lines', '--goal', '20');
    assert.equal(lines.status, 1, lines.stdout + lines.stderr);
    const printed = lines.stdout.split('\n').filter((l) => l.startsWith(`${FILE}:`));
    assert.equal(printed.length, unreachedBranches(map, 'src/services/').length);
    assert.match(lines.stdout, /^goal NOT met: 3 unreached arm\(s\) without a reason$/m);
    writeFileSync(reasons, printed.map((l) => `${l} no test can reach it`).join('\n') + '\n');
    const met = limbo('--reasons', reasons, '--goal', '20');
    assert.equal(met.status, 0, met.stdout + met.stderr);
    assert.match(met.stdout, /^goal met: branches 25\.0% ≥ 20%, every unreached arm has a reason$/m);
    writeFileSync(reasons, `${FILE}:12 if[0] no separator here\n`);
    const bad = limbo('--reasons', reasons);
    assert.equal(bad.status, 2);
    assert.match(
      bad.stderr.trim(),
      new RegExp(`^limbo coverage: ${reasons.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:1: expected`),
    );
    assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
    const none = limbo('--reasons', join(root, 'missing.txt'));
    assert.equal(none.status, 2);
    assert.match(none.stderr, /--reasons: no such file: /);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
