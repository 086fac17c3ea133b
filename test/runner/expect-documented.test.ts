import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skippedVerdict, undocumentedVerdicts } from '../../src/cli/run.js';
import { runFailedVerdict } from '../../src/runner/run-suites.js';
import type { VerdictFile } from '../../src/report/write-report.js';

const v = (suite: string, verdict: VerdictFile['verdict']): VerdictFile =>
  ({ suite, verdict, checks: [], runErrors: [] }) as unknown as VerdictFile;

test('--expect-documented: fail where documented, either where timing-dependent, pass elsewhere', () => {
  const documented = [
    { suite: 'a', expected: 'fail' as const },
    { suite: 'b', expected: 'pass' as const },
    { suite: 'c', expected: 'either' as const },
    { suite: 'd', expected: 'either' as const },
  ];
  assert.deepEqual(
    undocumentedVerdicts([v('a', 'fail'), v('b', 'pass'), v('c', 'pass'), v('d', 'fail')], documented),
    [],
  );
  assert.deepEqual(
    undocumentedVerdicts(
      [v('a', 'pass'), v('b', 'fail'), v('c', 'inconclusive'), v('d', 'pass')],
      documented,
    ).map((x) => x.suite),
    ['a', 'b', 'c'],
  );
});

test('--expect-documented: a suite skipped on a target is documented as skipped, and only then accepted', () => {
  const skipped = skippedVerdict('e', 'restate', 1, 'replay', 'no such link on restate');
  assert.equal(skipped.verdict, 'inconclusive');
  assert.equal(skipped.checks[0]?.skipped, 'no such link on restate');
  assert.deepEqual(undocumentedVerdicts([skipped], [{ suite: 'e', expected: 'skipped' }]), []);
  // Skipped where a verdict was documented, or inconclusive (not skipped) where a skip was: both changes.
  assert.equal(undocumentedVerdicts([skipped], [{ suite: 'e', expected: 'either' }]).length, 1);
  assert.equal(
    undocumentedVerdicts([v('e', 'inconclusive')], [{ suite: 'e', expected: 'skipped' }]).length,
    1,
  );
});

test('--expect-documented: a run that broke before judging is never the documented verdict', () => {
  // Its verdict is fail, but a target whose services did not start has not failed the suite.
  const broke = runFailedVerdict(
    'f',
    'restate',
    1,
    'replay',
    'restate-services exited (1) before it was ready',
  );
  assert.equal(broke.verdict, 'fail');
  for (const expected of ['fail', 'either', 'pass'] as const)
    assert.deepEqual(
      undocumentedVerdicts([broke], [{ suite: 'f', expected }]).map((x) => x.suite),
      ['f'],
      `documented ${expected}`,
    );
  // A run that judged its checks and also had schedule problems still counts as its verdict.
  const judged = {
    ...v('g', 'fail'),
    checks: [{ name: 'x', verdict: 'fail' }],
    runErrors: ['a fault was not injected'],
  };
  assert.deepEqual(
    undocumentedVerdicts([judged as unknown as VerdictFile], [{ suite: 'g', expected: 'fail' }]),
    [],
  );
});
