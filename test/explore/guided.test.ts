// Coverage-guided exploration: the corpus keeps a schedule only when its run reached a branch
// arm or a fault-space cell no earlier run had, saves it and reads it back; new schedules are
// derived from corpus entries (add, drop, shift, stretch, redraw) and stay valid schedules.
// Run directories here are written by hand (their coverage.json and fault-space.json).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { faultSpaceFile, type FaultSpace } from '../../src/coverage/fault-space.js';
import { Corpus, mutate } from '../../src/explore/guided.js';
import {
  exploreFaultKinds,
  fits,
  generateSchedule,
  hookFaultKinds,
  type GenerateOptions,
} from '../../src/explore/plan.js';
import { runFiles } from '../../src/run-data/files.js';
import { createRandom } from '../../src/util/random.js';

const gen: GenerateOptions = {
  topology: { processors: 3, partitions: 4, ingresses: 1 },
  chaosMs: 10_000,
  maxFaults: 3,
  kinds: exploreFaultKinds,
};

const loc = { start: { line: 1, column: 0 }, end: { line: 1, column: 1 } };

/** A run directory whose coverage reached `arms` of one two-arm branch per file, and whose faults met `cells`. */
function runDir(
  root: string,
  name: string,
  arms: [string, number][],
  cells: [string, string, string][],
): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const map: Record<string, unknown> = {};
  for (const [file, arm] of arms)
    map[file] = {
      path: file,
      statementMap: {},
      fnMap: {},
      branchMap: { '0': { loc, type: 'if', locations: [loc, loc], line: 1 } },
      s: {},
      f: {},
      b: { '0': arm === 0 ? [1, 0] : [0, 1] },
    };
  writeFileSync(join(dir, runFiles.coverage), JSON.stringify(map));
  const space: FaultSpace = {
    target: 'reference',
    met: [],
    unmet: [],
    cells: cells.map(([fault, subject, phase]) => ({ fault, subject, phase, windows: 1, ops: 1 })),
  };
  writeFileSync(join(dir, faultSpaceFile), JSON.stringify(space));
  return dir;
}

test('a schedule joins the corpus only when its run reached something new; the corpus is saved and read back', () => {
  const root = mkdtempSync(join(tmpdir(), 'limbo-guided-'));
  try {
    const corpusDir = join(root, 'corpus');
    const corpus = new Corpus(corpusDir);
    const schedule = generateSchedule(createRandom(1), gen);
    let g = corpus.observe(
      'a',
      11,
      schedule,
      runDir(root, 'a', [['src/x.ts', 0]], [['kill', 'processor (leader)', 'invoke']]),
    );
    assert.deepEqual([g.newBranches, g.newCells, g.kept, g.corpus], [1, 1, true, 1]);
    // The same arm and cell again: nothing new, not kept.
    g = corpus.observe(
      'b',
      12,
      schedule,
      runDir(root, 'b', [['src/x.ts', 0]], [['kill', 'processor (leader)', 'invoke']]),
    );
    assert.deepEqual([g.newBranches, g.newCells, g.kept, g.corpus], [0, 0, false, 1]);
    // The other arm of the same branch is new; so is a new phase of the same fault.
    g = corpus.observe(
      'c',
      13,
      schedule,
      runDir(root, 'c', [['src/x.ts', 1]], [['kill', 'processor (leader)', 'log append']]),
    );
    assert.deepEqual([g.newBranches, g.newCells, g.kept, g.branches, g.cells], [1, 1, true, 2, 2]);
    // A run without coverage (another target) is judged on its cells alone.
    const bare = runDir(root, 'd', [], [['latency', 'peer link ingress->processor', 'invoke']]);
    rmSync(join(bare, runFiles.coverage));
    g = corpus.observe('d', 14, schedule, bare);
    assert.deepEqual([g.newBranches, g.newCells, g.kept], [0, 1, true]);
    assert.deepEqual(readdirSync(corpusDir).sort(), ['a.json', 'c.json', 'd.json']);
    const again = new Corpus(corpusDir);
    assert.deepEqual(
      again.entries.map((e) => [e.name, e.seed, e.added]),
      [
        ['a', 11, { branches: 1, cells: 1 }],
        ['c', 13, { branches: 1, cells: 1 }],
        ['d', 14, { branches: 0, cells: 1 }],
      ],
    );
    assert.deepEqual(again.entries[0]!.schedule, schedule);
    writeFileSync(join(corpusDir, 'bad.json'), '{"kind":"other"}');
    assert.throws(() => new Corpus(corpusDir), /bad\.json is not a corpus entry/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('every kind of change is drawn; each keeps the schedule valid and within its bounds', () => {
  const r = createRandom(7);
  const seen = new Set<string>();
  for (let i = 0; i < 400; i++) {
    const parent = generateSchedule(r.fork(`p${i}`), gen);
    const m = mutate(r.fork(`m${i}`), parent, gen);
    if (m === undefined) continue;
    seen.add(m.how.split(' ')[0]!);
    assert.ok(m.schedule.length >= 1 && m.schedule.length <= gen.maxFaults, m.how);
    assert.notDeepEqual(m.schedule, parent, m.how);
    m.schedule.forEach((f, k) => {
      assert.ok(
        fits(
          m.schedule.filter((_, j) => j !== k),
          f,
        ),
        `${m.how}: ${JSON.stringify(m.schedule)}`,
      );
      assert.ok(f.atMs >= 0 && f.atMs <= gen.chaosMs - 2000 && f.forMs >= 500 && f.forMs <= 4000, m.how);
      if (k > 0) assert.ok(m.schedule[k - 1]!.atMs <= f.atMs);
    });
  }
  assert.deepEqual([...seen].sort(), ['add', 'drop', 'redraw', 'shift', 'stretch']);
});

test('next: fresh draws while the corpus is empty, then derived schedules too; a declared target gets no hook faults', () => {
  const root = mkdtempSync(join(tmpdir(), 'limbo-guided-'));
  try {
    const corpus = new Corpus(join(root, 'corpus'));
    const r = createRandom(3);
    for (let i = 0; i < 20; i++) assert.equal(corpus.next(r, gen).from, undefined);
    corpus.observe(
      'parent',
      1,
      generateSchedule(createRandom(5), gen),
      runDir(root, 'p', [['src/x.ts', 0]], []),
    );
    const froms = Array.from({ length: 40 }, () => corpus.next(r, gen).from);
    assert.ok(froms.some((f) => f === 'parent'));
    assert.ok(froms.some((f) => f === undefined));
    const declared: GenerateOptions = {
      ...gen,
      shape: {
        links: ['node-1->node-2', 'node-2->node-1'],
        services: [
          { name: 'node-1', role: 'processor' },
          { name: 'node-2', role: 'processor' },
        ],
      },
    };
    for (let i = 0; i < 200; i++) {
      const m = mutate(r, generateSchedule(r, declared), declared);
      assert.ok(!(m?.schedule ?? []).some((f) => hookFaultKinds.has(f.fault as never)), JSON.stringify(m));
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
