import { test } from 'node:test';
import assert from 'node:assert/strict';
import { undocumentedVerdicts } from '../../src/cli/run.js';
import type { VerdictFile } from '../../src/report/write-report.js';

const v = (suite: string, verdict: VerdictFile['verdict']): VerdictFile =>
  ({ suite, verdict }) as VerdictFile;

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
