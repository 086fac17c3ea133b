// Merging runs' coverage.json and what `limbo coverage` prints of it: counts add up across
// runs, a branch arm any run took is reached, unreached arms are listed error paths first
// with their source line, and run directories are found under the folders given. The maps
// here are small hand-written istanbul maps over real source files (their lines are read).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type libCoverage from 'istanbul-lib-coverage';
import { packageRoot } from '../../src/coverage/collect.js';
import {
  coverageFigures,
  findCoverageFiles,
  formatCoverage,
  mergeCoverage,
  unreachedBranches,
} from '../../src/coverage/map.js';
import { runFiles } from '../../src/run-data/files.js';

const FILE = 'src/services/log/controller.ts';

/** The 1-based line of `file` that matches. */
function lineOf(file: string, match: RegExp): number {
  const n =
    readFileSync(join(packageRoot, file), 'utf8')
      .split('\n')
      .findIndex((l) => match.test(l)) + 1;
  assert.ok(n > 0, String(match));
  return n;
}

const errorLine = lineOf(FILE, /heartbeat needs a node name/);
const plainLine = lineOf(FILE, /^export class /);

const loc = (line: number) => ({ start: { line, column: 0 }, end: { line, column: 10 } });

/** One file: two statements and two if-branches (an error path and a plain one), with the given counts. */
function map(s: [number, number], errorArms: [number, number], plainArms: [number, number]) {
  const data: libCoverage.FileCoverageData = {
    path: FILE,
    statementMap: { '0': loc(errorLine), '1': loc(plainLine) },
    fnMap: {},
    branchMap: {
      '0': { loc: loc(errorLine), type: 'if', locations: [loc(errorLine), loc(errorLine)], line: errorLine },
      '1': { loc: loc(plainLine), type: 'if', locations: [loc(plainLine), loc(plainLine)], line: plainLine },
    },
    s: { '0': s[0], '1': s[1] },
    f: {},
    b: { '0': errorArms, '1': plainArms },
  };
  return { [FILE]: data };
}

function runsWith(maps: object[]): { root: string; files: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'limbo-coverage-map-'));
  const files = maps.map((m, i) => {
    // runs/<suite>/<time>/coverage.json, as the runner writes them; logs/ is not searched.
    const dir = join(root, `suite-${i}`, '2026-01-01T00-00-00.000Z');
    mkdirSync(join(dir, runFiles.logs), { recursive: true });
    writeFileSync(join(dir, runFiles.coverage), JSON.stringify(m));
    writeFileSync(join(dir, runFiles.logs, runFiles.coverage), 'not a run');
    return join(dir, runFiles.coverage);
  });
  return { root, files };
}

test('runs merge: counts add up, an arm any run took is reached, the rest are listed error paths first', () => {
  const { root, files } = runsWith([map([1, 0], [0, 0], [2, 0]), map([3, 0], [0, 0], [0, 0])]);
  try {
    assert.deepEqual(findCoverageFiles([root]), files);
    const merged = mergeCoverage(findCoverageFiles([root]));
    const fc = merged.fileCoverageFor(FILE).toJSON() as libCoverage.FileCoverageData;
    assert.deepEqual(fc.s, { '0': 4, '1': 0 });
    assert.deepEqual(fc.b, { '0': [0, 0], '1': [2, 0] });
    const { files: figures, total } = coverageFigures(merged, 'src/services/');
    assert.equal(figures.length, 1);
    assert.deepEqual(total.branches, { covered: 1, total: 4 });
    const unreached = unreachedBranches(merged, 'src/services/');
    assert.deepEqual(
      unreached.map((u) => [u.line, u.arm, u.errorPath]),
      [
        [errorLine, 0, true],
        [errorLine, 1, true],
        [plainLine, 1, false],
      ],
    );
    assert.match(unreached[0]!.text, /heartbeat needs a node name/);
    const table = formatCoverage(merged, 'src/services/', files.length, 2);
    assert.match(table, /^coverage of src\/services\/ over 2 run\(s\)$/m);
    assert.match(
      table,
      new RegExp(`^${FILE.replace(/\//g, '\\/')}\\s+50\\.0%\\s+1/2\\s+25\\.0%\\s+1/4$`, 'm'),
    );
    assert.match(
      table,
      /^3 branch arm\(s\) no run took, 2 on error paths \(first 2; --unreached N for more\):$/m,
    );
    assert.match(table, new RegExp(`^  error ${FILE.replace(/\//g, '\\/')}:${errorLine} if\\[0\\]`, 'm'));
    assert.doesNotMatch(table, new RegExp(`:${plainLine} `));
    // Files outside the prefix are not shown.
    assert.match(formatCoverage(merged, 'src/proxy/', 2, 10), /^no coverage of src\/proxy\/ in 2 run\(s\)$/m);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a path that does not exist, or a file that is not a coverage map, is named', () => {
  assert.throws(() => findCoverageFiles(['/no/such/runs']), /no such file or folder: \/no\/such\/runs/);
  const { root, files } = runsWith([map([1, 0], [0, 0], [0, 0])]);
  try {
    writeFileSync(files[0]!, '{ not json');
    assert.throws(() => mergeCoverage(files), new RegExp(`${files[0]!} is not a coverage map`));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
