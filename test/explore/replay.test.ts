// What counts as a reproduced rerun, on hand-made verdicts: a seed file's recorded failure
// (fail, every saved check failing again), a suite file's documented verdict (pass, fail,
// either, skipped), a run that broke never; and the table's rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fileResult,
  replayTable,
  rerunOf,
  reproduces,
  type ReplayExpectation,
} from '../../src/explore/replay.js';
import { runFailedVerdict, skippedVerdict } from '../../src/runner/run-suites.js';
import type { Verdict } from '../../src/checkers/checker.js';
import type { VerdictFile } from '../../src/run-data/verdict.js';
import type { LoadedSuite } from '../../src/runner/load-suites.js';
import type { Suite } from '../../src/runner/suite.js';

const verdict = (v: Verdict, failed: string[] = []): VerdictFile => ({
  suite: 's',
  target: 'reference:legacy',
  seed: 1,
  verdict: v,
  startedAt: new Date(0).toISOString(),
  durationMs: 1,
  ops: { total: 1, ok: 1, fail: 0, info: 0, open: 0 },
  faults: 1,
  checks: [
    ...failed.map((name) => ({ name, verdict: 'fail' as const, summary: '', evidence: { details: {} } })),
    { name: 'exactlyOnce', verdict: 'pass', summary: '', evidence: { details: {} } },
  ],
  replay: '',
  runErrors: [],
});

const seedExpects: ReplayExpectation = {
  kind: 'seed',
  verdict: 'fail',
  failed: ['noClientLeftHanging', 'pendingDrains'],
};

test('a seed rerun reproduces only when every recorded check fails again', () => {
  assert.ok(reproduces(verdict('fail', ['noClientLeftHanging', 'pendingDrains']), seedExpects));
  assert.ok(
    reproduces(verdict('fail', ['pendingDrains', 'noClientLeftHanging', 'serviceLevels']), seedExpects),
  );
  assert.ok(!reproduces(verdict('fail', ['noClientLeftHanging']), seedExpects));
  assert.ok(!reproduces(verdict('fail', ['exactlyOnce']), seedExpects));
  assert.ok(!reproduces(verdict('pass'), seedExpects));
  assert.ok(!reproduces(verdict('inconclusive'), seedExpects));
  const broke = runFailedVerdict('s', 't', 1, '', 'no cluster');
  assert.ok(!reproduces(broke, seedExpects));
  assert.deepEqual(rerunOf(broke, seedExpects), {
    verdict: 'error',
    failed: [],
    reproduced: false,
    runError: 'no cluster',
  });
});

test('a suite rerun reproduces its documented verdict', () => {
  const suite = (verdict: ReplayExpectation['verdict']): ReplayExpectation => ({
    kind: 'suite',
    verdict,
    failed: [],
  });
  assert.ok(reproduces(verdict('pass'), suite('pass')));
  assert.ok(!reproduces(verdict('fail', ['x']), suite('pass')));
  assert.ok(reproduces(verdict('fail', ['x']), suite('fail')));
  assert.ok(reproduces(verdict('pass'), suite('either')));
  assert.ok(reproduces(verdict('fail', ['x']), suite('either')));
  assert.ok(!reproduces(verdict('inconclusive'), suite('either')));
  const skipped = skippedVerdict('s', 't', 1, '', 'no such link');
  assert.ok(reproduces(skipped, suite('skipped')));
  assert.ok(!reproduces(skipped, suite('pass')));
  assert.equal(rerunOf(skipped, suite('pass')).verdict, 'skipped');
});

test('the table: reproduced k/N, the rate and what the reruns gave', () => {
  const loaded = { file: '/x/seeds/a.json', suite: { name: 'a' } as Suite } as LoadedSuite;
  const reruns = [
    rerunOf(verdict('fail', ['noClientLeftHanging', 'pendingDrains']), seedExpects),
    rerunOf(verdict('fail', ['noClientLeftHanging', 'pendingDrains']), seedExpects),
    rerunOf(verdict('pass'), seedExpects),
  ];
  const r = fileResult(loaded, 'reference:legacy', 7, seedExpects, reruns);
  assert.equal(r.reproduced, 2);
  assert.equal(r.rate, 2 / 3);
  const table = replayTable([r], (f) => f.replace('/x/', ''));
  const [head, row] = table.trimEnd().split('\n');
  assert.match(head!, /^file\s+expected\s+reproduced\s+rate\s+reruns$/);
  assert.match(
    row!,
    /^seeds\/a\.json\s+fail \(noClientLeftHanging, pendingDrains\)\s+2\/3\s+67%\s+fail ×2, pass ×1$/,
  );
});
