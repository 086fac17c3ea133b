import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skippedVerdict, undocumentedVerdicts } from '../../src/cli/run.js';
import type { VerdictFile } from '../../src/report/write-report.js';

const v = (suite: string, verdict: VerdictFile['verdict']): VerdictFile =>
  ({ suite, verdict, checks: [] }) as unknown as VerdictFile;

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
