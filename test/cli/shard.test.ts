// --shard k/N on limbo run, explore, detect and soak: shard k runs the items of the unsharded
// list whose index is k-1 mod N, with the seeds the unsharded command gives them, so the shards
// together are the whole. Checked through --plan (what would run, with its seed), which is the
// command's own selection without starting a topology.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explore, plannedRun, type ExploreOptions } from '../../src/explore/explore.js';
import type { SuiteRunOutcome } from '../../src/runner/run-suite.js';
import { parseShard, shardItems, type Shard } from '../../src/runner/shard.js';
import { UsageError } from '../../src/util/errors.js';
import { limboSync } from '../helpers/limbo-cli.js';
import { killJudgeVerdict } from '../helpers/kill-judge.js';

test('parseShard takes k/N with 1 <= k <= N and names anything else', () => {
  assert.deepEqual(parseShard('2/3'), { index: 2, count: 3 });
  assert.deepEqual(parseShard('1/1'), { index: 1, count: 1 });
  for (const bad of ['0/3', '4/3', 'x', '1/0', '1/', '/3', '-1/3', '1.5/3', '1/3/3', ''])
    assert.throws(() => parseShard(bad), UsageError, bad);
});

test('the shards of any list are disjoint, keep the list order and together are the list', () => {
  for (let length = 0; length <= 10; length++) {
    const list = Array.from({ length }, (_, i) => `item-${i}`);
    for (let count = 1; count <= 7; count++) {
      const parts = Array.from({ length: count }, (_, k) => shardItems(list, { index: k + 1, count }));
      const union = parts.flat().sort((a, b) => list.indexOf(a) - list.indexOf(b));
      assert.deepEqual(union, list, `${length} items in ${count} shards`);
      for (const p of parts)
        assert.deepEqual(
          p,
          [...p].sort((a, b) => list.indexOf(a) - list.indexOf(b)),
        );
      assert.deepEqual(
        parts[0],
        list.filter((_, i) => i % count === 0),
      );
    }
  }
});

/** The plan lines (`plan i/n item seed s…`) a command prints. */
function plan(args: string[]): string[] {
  const r = limboSync([...args, '--plan'], 120_000);
  assert.equal(r.status, 0, `limbo ${args.join(' ')} --plan: ${r.stderr}`);
  const lines = r.stdout.split('\n').filter((l) => l.startsWith('plan '));
  assert.ok(lines.length > 0, r.stdout);
  return lines;
}

const placeOf = (line: string): number => Number(/^plan (\d+)\//.exec(line)?.[1]);

const commands: { name: string; args: string[] }[] = [
  { name: 'run (by suite)', args: ['run', 'chaos', '--seed', '7'] },
  { name: 'explore (by schedule)', args: ['explore', '--seed', '7', '--runs', '8'] },
  { name: 'detect (by switch)', args: ['detect', '--seed', '7'] },
  {
    name: 'soak (by seed)',
    args: ['soak', 'chaos/leader-kill.ts', 'chaos/link-flap.ts', '--seeds', '5', '--seed', '7'],
  },
];

for (const { name, args } of commands)
  test(`${name}: shards 1/3..3/3 together are the unsharded plan, with its seeds`, () => {
    const whole = plan(args);
    const shards = [1, 2, 3].map((k) => plan([...args, '--shard', `${k}/3`]));
    // Same lines (item and seed) as unsharded, each in exactly one shard, by index mod 3.
    assert.deepEqual(
      shards.flat().sort((a, b) => placeOf(a) - placeOf(b) || whole.indexOf(a) - whole.indexOf(b)),
      whole,
    );
    shards.forEach((lines, k) => {
      for (const l of lines) assert.equal((placeOf(l) - 1) % 3, k, `${l} in shard ${k + 1}/3`);
    });
    // A different seed gives other seeds: the plan's seeds are the command's, not fixed.
    if (!args.includes('run') && !args.includes('detect'))
      assert.notDeepEqual(plan(args.map((a) => (a === '7' ? '8' : a))), whole);
  });

test('a bad --shard, or --shard without --seed, exits 2 with one line naming it', () => {
  const base: string[][] = [
    ['run', 'chaos', '--seed', '1'],
    ['explore', '--seed', '1'],
    ['detect', '--seed', '1'],
    ['soak', 'chaos/leader-kill.ts', '--seed', '1'],
  ];
  for (const args of base) {
    for (const bad of ['0/3', '4/3', 'x']) {
      const r = limboSync([...args, '--shard', bad, '--plan'], 60_000);
      assert.equal(r.status, 2, `${args[0]} --shard ${bad}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`--shard ${bad === 'x' ? 'must be k/N' : bad}`));
    }
    const unseeded = args.filter((a, i) => a !== '--seed' && args[i - 1] !== '--seed');
    const r = limboSync([...unseeded, '--shard', '1/3', '--plan'], 60_000);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--shard needs --seed/);
  }
  const r = limboSync(['explore', '--seed', '1', '--guided', '--shard', '1/2'], 60_000);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--guided/);
});

/** explore() with a judge for a system: a schedule fails when it holds a kill (no cluster). */
async function searchShard(shard: Shard | undefined) {
  const ran: number[] = [];
  const o: ExploreOptions = {
    targetName: 'reference:legacy',
    seed: 21,
    runs: 8,
    budgetMs: 60_000,
    maxFaults: 3,
    kinds: ['kill', 'latency', 'link-down'],
    chaosMs: 10_000,
    convergeMs: 8000,
    shrinkRuns: 0,
    confirmRuns: 0,
    parallel: 2,
    ...(shard !== undefined ? { shard } : {}),
    runOne: (suite, seed): Promise<SuiteRunOutcome> => {
      ran.push(seed);
      return Promise.resolve({ runDir: `runs/${suite.name}`, verdict: killJudgeVerdict(suite, seed) });
    },
    save: (s) => `seeds/${s.name}.json`,
    write: () => {},
  };
  return { result: await explore(o), ran, o };
}

test('explore runs exactly its shard of the schedules, as planned, and the shards are the whole search', async () => {
  const whole = await searchShard(undefined);
  const runs = [];
  const found = [];
  for (let k = 1; k <= 3; k++) {
    const part = await searchShard({ index: k, count: 3 });
    const planned = Array.from({ length: 8 }, (_, i) => i)
      .filter((i) => i % 3 === k - 1)
      .map((i) => plannedRun(i, part.o).seed);
    assert.deepEqual(part.ran, planned, `shard ${k}/3 ran the planned schedules`);
    runs.push(...part.result.runs);
    found.push(...part.result.found);
  }
  const key = (r: { seed: number }) => whole.result.runs.findIndex((w) => w.seed === r.seed);
  assert.deepEqual(
    runs.sort((a, b) => key(a) - key(b)),
    whole.result.runs,
  );
  assert.deepEqual(found.sort(), [...whole.result.found].sort());
  assert.ok(whole.result.found.length > 0, 'some schedule failed, so the found seeds are compared');
});
