// limbo merge of `limbo explore` shards: every schedule back in the search's order, the seed
// files each shard saved, exit 1 when any shard saved one (as the unsharded search).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExploreShardResult } from '../../src/cli/explore.js';
import { shardItems, writeShardManifest } from '../../src/runner/shard.js';
import { limboSync } from '../helpers/limbo-cli.js';

const work = mkdtempSync(join(tmpdir(), 'limbo-merge-explore-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

const items = ['run-1', 'run-2', 'run-3', 'run-4', 'run-5'];

function exploreShards(name: string, failing: number[]): string[] {
  return [1, 2].map((k) => {
    const dir = join(work, name, `shard-${k}`);
    const part = shardItems(items, { index: k, count: 2 });
    const result: ExploreShardResult = {
      runs: part.map((item) => {
        const index = items.indexOf(item);
        const failed = failing.includes(index) ? ['noClientLeftHanging'] : [];
        return {
          index,
          seed: 1000 + index,
          schedule: [],
          verdict: failed.length > 0 ? 'fail' : 'pass',
          failed,
          runDir: `runs/${item}`,
        };
      }),
      found: failing.filter((i) => i % 2 === k - 1).map((i) => `seeds/found-${i + 1}.json`),
      stoppedBy: 'runs',
    };
    writeShardManifest(dir, {
      command: 'explore',
      shard: { index: k, count: 2 },
      seed: 5,
      target: 'reference:legacy',
      items,
      part,
      endedAt: new Date(0).toISOString(),
      result,
    });
    return dir;
  });
}

test('merging explore shards: the schedules in search order, the seeds saved, exit 1 when any was', () => {
  let out = join(work, 'red', 'merged');
  let r = limboSync(['merge', ...exploreShards('red', [3]), '--out', out], 60_000);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const merged = JSON.parse(readFileSync(join(out, 'explore.json'), 'utf8')) as ExploreShardResult;
  assert.deepEqual(
    merged.runs.map((run) => run.seed),
    [1000, 1001, 1002, 1003, 1004],
  );
  assert.deepEqual(merged.found, ['seeds/found-4.json']);
  assert.match(r.stdout, /explored 5 schedule\(s\): 1 failed/);

  out = join(work, 'green', 'merged');
  r = limboSync(['merge', ...exploreShards('green', []), '--out', out], 60_000);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /explored 5 schedule\(s\): 0 failed/);
});

test('limbo explore --shard writes the manifest limbo merge reads, even when its budget starts no run', () => {
  const dirs = [1, 2].map((k) => {
    const out = join(work, 'cli', `shard-${k}`);
    const r = limboSync(
      [
        'explore',
        '--seed',
        '3',
        '--runs',
        '3',
        '--shard',
        `${k}/2`,
        '--budget',
        '0s',
        '--out',
        out,
        '--seeds-dir',
        join(out, 'seeds'),
      ],
      120_000,
    );
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`replay the whole search: .* --seed 3 --runs 3 --shard ${k}/2\\)`));
    return out;
  });
  const r = limboSync(['merge', ...dirs, '--out', join(work, 'cli', 'merged')], 60_000);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /merging 2 shard\(s\) of limbo explore on reference, seed 3, 3 item\(s\)/);
  assert.match(r.stdout, /explored 0 schedule\(s\) \(budget ran out in a shard\): 0 failed/);
});
