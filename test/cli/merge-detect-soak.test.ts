// limbo merge of `limbo detect` and `limbo soak` shards: the switches (or seeds) back in the
// unsharded order, the score and counts added up, the exit code the unsharded command gives.
// The shards are manifests written as the commands write them, merged by the real CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DetectionReport, SwitchResult, SuiteVerdict } from '../../src/detect/detect.js';
import type { SoakShardResult } from '../../src/cli/soak.js';
import type { SoakRun } from '../../src/soak/soak.js';
import type { BugName } from '../../src/services/bugs.js';
import { shardItems, writeShardManifest } from '../../src/runner/shard.js';
import { limboSync } from '../helpers/limbo-cli.js';

const work = mkdtempSync(join(tmpdir(), 'limbo-merge-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

const switches = ['lost-submit-notification', 'resend-storm', 'lost-leadership-is-final'] as BugName[];

const switchResult = (sw: BugName, caught: boolean): SwitchResult => ({
  switch: sw,
  mustCatch: true,
  description: 'by hand',
  source: 'by hand',
  claimedBy: ['leader-kill'],
  caught,
  ...(caught ? { caughtBy: { suite: 'leader-kill', check: 'noClientLeftHanging' }, secondsToFail: 5 } : {}),
  runs: [],
});

const onReference = (verdict: string): SuiteVerdict => ({
  suite: 'leader-kill',
  target: 'reference',
  verdict,
  seconds: 5,
  failing: verdict === 'fail' ? ['noClientLeftHanging'] : [],
});

function detectShards(name: string, caught: boolean[], reference: string[]): string[] {
  return [1, 2].map((k) => {
    const dir = join(work, name, `shard-${k}`);
    const part = shardItems(switches, { index: k, count: 2 });
    const report: DetectionReport = {
      seed: 7,
      startedAt: new Date(0).toISOString(),
      switches: part.map((sw) => switchResult(sw, caught[switches.indexOf(sw)]!)),
      score: { caught: 0, total: 0 },
      missedMustCatch: [],
      reference: [onReference(reference[k - 1]!)],
      falseAlarms: [],
    };
    writeShardManifest(dir, {
      command: 'detect',
      shard: { index: k, count: 2 },
      seed: 7,
      target: 'reference',
      items: switches,
      part,
      endedAt: new Date(0).toISOString(),
      result: report,
    });
    return dir;
  });
}

test('merging detect shards: switches in order, one score, a suite on reference counted once', () => {
  let out = join(work, 'detect-red', 'merged');
  let r = limboSync(
    ['merge', ...detectShards('detect-red', [true, true, false], ['pass', 'fail']), '--out', out],
    60_000,
  );
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const merged = JSON.parse(
    readFileSync(join(out, 'detection', 'detection.json'), 'utf8'),
  ) as DetectionReport;
  assert.deepEqual(
    merged.switches.map((s) => s.switch),
    switches,
  );
  assert.deepEqual(merged.score, { caught: 2, total: 3 });
  assert.deepEqual(merged.missedMustCatch, ['lost-leadership-is-final']);
  assert.equal(merged.reference.length, 1, 'leader-kill ran on reference in both shards: once');
  assert.equal(merged.falseAlarms.length, 1, 'a false alarm in either shard is one');
  assert.match(r.stdout, /score 2\/3; reference: 0\/1 suites pass, 1 false alarm/);
  assert.match(r.stdout, /missed must-catch switch\(es\): lost-leadership-is-final/);

  out = join(work, 'detect-green', 'merged');
  r = limboSync(
    ['merge', ...detectShards('detect-green', [true, true, true], ['pass', 'pass']), '--out', out],
    60_000,
  );
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /score 3\/3; reference: 1\/1 suites pass, 0 false alarm/);
});

const soakRun = (suite: string, seed: number, hung: number): SoakRun => ({
  suite,
  seed,
  verdict: hung > 0 ? 'fail' : 'pass',
  hung,
  lost: 0,
  duplicated: 0,
  falseAlarm: false,
  leaks: [],
  seconds: 10,
  replay: 'by hand',
});

function soakShards(name: string, hungOnSeed8: number): string[] {
  const seeds = ['7', '8', '9'];
  return [1, 2].map((k) => {
    const dir = join(work, name, `shard-${k}`);
    const part = shardItems(seeds, { index: k, count: 2 });
    const result: SoakShardResult = {
      runs: part.flatMap((s) =>
        ['x', 'y'].map((suite) => soakRun(suite, Number(s), s === '8' && suite === 'y' ? hungOnSeed8 : 0)),
      ),
      overallLeaks: [],
      skipped: [],
      suites: ['x', 'y'],
    };
    writeShardManifest(dir, {
      command: 'soak',
      shard: { index: k, count: 2 },
      seed: 7,
      target: 'reference',
      items: seeds,
      part,
      endedAt: new Date(0).toISOString(),
      result,
    });
    return dir;
  });
}

test('merging soak shards: the runs in seed order, one table, red on any hang', () => {
  let out = join(work, 'soak-red', 'merged');
  let r = limboSync(['merge', ...soakShards('soak-red', 2), '--out', out], 60_000);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const soak = JSON.parse(readFileSync(join(out, 'soak.json'), 'utf8')) as {
    runs: SoakRun[];
    seeds: number[];
  };
  assert.deepEqual(
    soak.runs.map((run) => `${run.seed}${run.suite}`),
    ['7x', '7y', '8x', '8y', '9x', '9y'],
  );
  assert.deepEqual(soak.seeds, [7, 8, 9]);
  assert.match(r.stdout, /^y +3 +2 /m);
  assert.match(r.stdout, /^total +6 +2 /m);
  assert.match(r.stdout, /soak: NOT clean/);

  out = join(work, 'soak-clean', 'merged');
  r = limboSync(['merge', ...soakShards('soak-clean', 0), '--out', out], 60_000);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /soak: clean/);
});
