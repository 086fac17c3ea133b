// `limbo explore --parallel N`: N slots run schedules side by side; what is drawn, what fails
// and how each failure shrinks is the same as with one slot, reported in schedule order. The
// "system" here is a deterministic judge of the schedule (fails when it holds a kill), so the
// test is about explore's slots, not about a cluster (explore-cli.test.ts runs real ones).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explore, type ExploreOptions } from '../../src/explore/explore.js';
import type { SuiteRunResult } from '../../src/runner/run-suite.js';
import type { Suite } from '../../src/runner/suite.js';
import { killJudgeVerdict } from '../helpers/kill-judge.js';

function judge(
  suite: Suite,
  seed: number,
  log: { live: number; maxLive: number; slots: Set<number> },
  slot: number,
): Promise<SuiteRunResult> {
  log.live++;
  log.maxLive = Math.max(log.maxLive, log.live);
  log.slots.add(slot);
  return new Promise((resolve) =>
    setTimeout(
      () => {
        log.live--;
        resolve({
          runDir: `runs/${suite.name}/${suite.schedule.length}`,
          run: {} as SuiteRunResult['run'],
          verdict: killJudgeVerdict(suite, seed),
        });
      },
      5 + (seed % 7),
    ),
  );
}

async function search(parallel: number) {
  const log = { live: 0, maxLive: 0, slots: new Set<number>() };
  const saved: string[] = [];
  const o: ExploreOptions = {
    targetName: 'reference:legacy',
    seed: 11,
    runs: 8,
    budgetMs: 60_000,
    maxFaults: 3,
    kinds: ['kill', 'latency', 'link-down'],
    chaosMs: 10_000,
    convergeMs: 8000,
    shrinkRuns: 3,
    confirmRuns: 1,
    parallel,
    runOne: (suite, seed, slot) => judge(suite, seed, log, slot),
    save: (s) => {
      saved.push(JSON.stringify(s.schedule));
      return `seeds/${s.name}.json`;
    },
    write: () => {},
  };
  const result = await explore(o);
  return { result, log, saved };
}

test('explore --parallel 2 runs two schedules at once with the same results as one slot', async () => {
  const one = await search(1);
  const two = await search(2);
  assert.equal(one.log.maxLive, 1);
  assert.equal(two.log.maxLive, 2, 'two runs overlapped');
  assert.deepEqual([...two.log.slots].sort(), [0, 1]);
  const view = (r: typeof one) =>
    r.result.runs.map((x) => [x.seed, JSON.stringify(x.schedule), x.verdict, x.failed]);
  assert.deepEqual(view(two), view(one), 'same schedules, same verdicts, in schedule order');
  assert.ok(one.result.found.length > 0, 'some schedule held a kill');
  assert.deepEqual(two.result.found, one.result.found);
  assert.deepEqual([...two.saved].sort(), [...one.saved].sort(), 'shrinking is the same per seed');
});
