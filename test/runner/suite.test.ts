// defineSuite names a bad workload option when the suite is loaded, before anything starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineSuite } from '../../src/runner/suite.js';
import { at } from '../../src/faults/schedule.js';
import { kill } from '../../src/faults/process-faults.js';
import { noClientLeftHanging } from '../../src/checkers/no-client-left-hanging.js';
import { UsageError } from '../../src/util/errors.js';

const base = {
  name: 'x',
  why: 'y',
  schedule: [at('1s', kill('processor-1'), { for: '1s' })],
  expect: [noClientLeftHanging()],
};

test('a bad give-up or burst option is a usage error naming the suite and the field', () => {
  assert.throws(
    () => defineSuite({ ...base, workload: { giveUp: { fraction: 2, afterMs: [10, 20], retry: 'none' } } }),
    (err: Error) =>
      err instanceof UsageError &&
      /suite x.*workload: .*fraction must be a number from 0 to 1/s.test(err.message),
  );
  const ok = defineSuite({
    ...base,
    workload: { giveUp: { fraction: 0.2, afterMs: [10, 20], retry: 'same-key' } },
  });
  assert.equal(ok.workload.giveUp?.fraction, 0.2);
});
