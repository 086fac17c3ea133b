// limbo merge: the shards of a `limbo run` (each --shard k/N into its own --out) merged into one
// result equal to the unsharded run's (same verdicts in the same order, same exit code), with
// one junit.xml and an index linking each run's report.html; shards that do not make a whole
// (one missing, one twice) are bad input; fail beats inconclusive beats pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { VerdictFile } from '../../src/run-data/verdict.js';
import type { DocumentedVerdict } from '../../src/runner/run-suites.js';
import { writeShardManifest } from '../../src/runner/shard.js';
import { limboSync, packageRoot } from '../helpers/limbo-cli.js';

// Suite files live inside the package (so `import … from 'limbo'` resolves), not under test/.
mkdirSync(join(packageRoot, '.limbo'), { recursive: true });
const work = mkdtempSync(join(packageRoot, '.limbo', 'merge-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const suitesDir = join(work, 'suites');
mkdirSync(suitesDir);
// Four suites skipped on reference (a verdict at no cost) and one short real run.
for (const n of ['a', 'b', 'c', 'd'])
  writeFileSync(
    join(suitesDir, `skipped-${n}.ts`),
    `import { defineSuite, noClientLeftHanging } from 'limbo';
export default defineSuite({
  name: 'merge-skipped-${n}',
  why: 'a verdict that costs nothing: skipped on reference',
  schedule: [],
  expect: [noClientLeftHanging()],
  skipOn: { reference: 'the merge test skips it' },
});
`,
  );
writeFileSync(
  join(suitesDir, 'short.ts'),
  `import { defineSuite, noClientLeftHanging } from 'limbo';
export default defineSuite({
  name: 'merge-short',
  why: 'one real run, as short as a run gets',
  topology: { processors: 1, partitions: 1 },
  workload: { concurrency: 2 },
  warmup: '500ms',
  chaos: '1s',
  converge: '3s',
  schedule: [],
  expect: [noClientLeftHanging()],
});
`,
);

const rowsOf = (dir: string): string[] =>
  (JSON.parse(readFileSync(join(dir, 'verdicts.json'), 'utf8')) as VerdictFile[]).map(
    (v) =>
      `${v.suite} ${v.target} ${v.seed} ${v.verdict} ${v.checks.map((c) => `${c.name}=${c.verdict}`).join(',')}`,
  );

test('limbo merge of three shards equals the unsharded run: verdicts, order, exit code, junit, index', () => {
  const run = (out: string, shard: string) =>
    limboSync(
      ['run', suitesDir, '--target', 'reference', '--seed', '9', '--out', out, '--shard', shard],
      240_000,
    );
  // Unsharded: one shard of one, merged alone.
  const whole = run(join(work, 'whole'), '1/1');
  assert.ok(whole.status === 0 || whole.status === 3, whole.stdout + whole.stderr);
  const mergedWhole = limboSync(['merge', join(work, 'whole'), '--out', join(work, 'merged-whole')], 60_000);
  assert.equal(mergedWhole.status, whole.status, mergedWhole.stdout + mergedWhole.stderr);

  const shards = [1, 2, 3].map((k) => join(work, `shard-${k}`));
  const statuses = shards.map((dir, k) => run(dir, `${k + 1}/3`).status);
  assert.ok(
    statuses.every((s) => s === 0 || s === 3),
    String(statuses),
  );
  const merged = limboSync(['merge', ...shards, '--out', join(work, 'merged')], 60_000);
  assert.equal(merged.status, whole.status, merged.stdout + merged.stderr);
  assert.deepEqual(rowsOf(join(work, 'merged')), rowsOf(join(work, 'merged-whole')));
  assert.equal(rowsOf(join(work, 'merged')).length, 5);

  // The table printed is the unsharded run's (suite, target, verdict; a real run's op count
  // and time vary from run to run).
  const table = (out: string): string[] =>
    out
      .split('\n')
      .filter((l) => /^(suite|merge-\S+) +(target|reference) /.test(l))
      .map((l) => l.split(/\s+/).slice(0, 3).join(' '));
  assert.deepEqual(table(merged.stdout), table(whole.stdout));
  assert.equal(table(merged.stdout).length, 6);

  const junit = readFileSync(join(work, 'merged', 'junit.xml'), 'utf8');
  assert.equal(junit.match(/<testsuite /g)?.length, 5);
  const index = readFileSync(join(work, 'merged', 'index.html'), 'utf8');
  const link = /href="([^"]+report\.html)"/.exec(index)?.[1];
  assert.ok(link !== undefined, index);
  assert.ok(existsSync(join(work, 'merged', link)), `the index links ${link}, which exists`);
});

/** A shard manifest of `limbo run` made by hand, with one verdict per item of its part. */
function handShard(
  dir: string,
  k: number,
  n: number,
  items: string[],
  verdicts: VerdictFile['verdict'][],
  documented?: DocumentedVerdict,
): void {
  const part = items.filter((_, i) => i % n === k - 1);
  writeShardManifest(dir, {
    command: 'run',
    shard: { index: k, count: n },
    seed: 1,
    target: 'reference',
    items,
    part,
    endedAt: new Date(0).toISOString(),
    result: {
      verdicts: part.map((item, j) => ({
        suite: item,
        target: 'reference',
        seed: 1,
        verdict: verdicts[j]!,
        startedAt: new Date(0).toISOString(),
        durationMs: 1000,
        ops: { total: 1, ok: 1, fail: 0, info: 0, open: 0 },
        faults: 0,
        checks: [
          {
            name: 'noClientLeftHanging',
            verdict: verdicts[j]!,
            summary: 'by hand',
            evidence: { details: {} },
          },
        ],
        replay: 'by hand',
        runErrors: [],
      })),
      documented: part.map((suite) => ({ suite, expected: documented ?? 'pass' })),
      expectDocumented: documented !== undefined,
    },
  });
}

test('merge exit codes: fail beats inconclusive beats pass; a missing or repeated shard is bad input', () => {
  const items = ['s1', 's2', 's3'];
  const merge = (name: string, shards: [number, VerdictFile['verdict']][]) => {
    const dirs = shards.map(([k, v], i) => {
      const dir = join(work, name, `shard-${i}`);
      handShard(dir, k, 3, items, [v]);
      return dir;
    });
    return limboSync(['merge', ...dirs, '--out', join(work, name, 'merged')], 60_000);
  };
  assert.equal(
    merge('pass', [
      [1, 'pass'],
      [2, 'pass'],
      [3, 'pass'],
    ]).status,
    0,
  );
  assert.equal(
    merge('inconclusive', [
      [1, 'pass'],
      [2, 'inconclusive'],
      [3, 'pass'],
    ]).status,
    3,
  );
  assert.equal(
    merge('fail', [
      [1, 'inconclusive'],
      [2, 'fail'],
      [3, 'pass'],
    ]).status,
    1,
  );
  // --expect-documented on every shard: the documented verdicts pass, a changed one fails.
  const documented = (name: string, verdicts: VerdictFile['verdict'][]) => {
    const dirs = [1, 2, 3].map((k) => {
      const dir = join(work, name, `shard-${k}`);
      handShard(dir, k, 3, items, [verdicts[k - 1]!], 'fail');
      return dir;
    });
    return limboSync(['merge', ...dirs, '--out', join(work, name, 'merged')], 60_000);
  };
  let r = documented('documented', ['fail', 'fail', 'fail']);
  assert.equal(r.status, 0, r.stdout);
  assert.match(r.stdout, /every verdict is the documented one/);
  r = documented('changed', ['fail', 'pass', 'fail']);
  assert.equal(r.status, 1, r.stdout);
  assert.match(r.stdout, /verdict changed: s2 on reference is pass, documented fail/);
  r = merge('missing', [
    [1, 'pass'],
    [3, 'pass'],
  ]);
  assert.equal(r.status, 2);
  assert.equal(r.stderr, 'limbo merge: missing shard(s) 2/3 of limbo run\n');
  r = merge('twice', [
    [1, 'pass'],
    [2, 'pass'],
    [2, 'pass'],
    [3, 'pass'],
  ]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^limbo merge: shard 2\/3 given twice: .*\n$/);
  r = limboSync(['merge', join(work, 'nowhere')], 60_000);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /nowhere: no such directory/);
  assert.ok(dirname(work).endsWith('.limbo'));
});
