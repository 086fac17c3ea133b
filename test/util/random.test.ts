import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRandom } from '../../src/util/random.js';
import { parseDurationMs } from '../../src/util/duration.js';
import { UsageError } from '../../src/util/errors.js';

test('one seed gives one sequence; another seed another', () => {
  const a = Array.from({ length: 20 }, createRandom(42).next);
  const b = Array.from({ length: 20 }, createRandom(42).next);
  const c = Array.from({ length: 20 }, createRandom(43).next);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  assert.ok(a.every((x) => x >= 0 && x < 1));
});

test('forks are independent of draw order and of each other', () => {
  const r1 = createRandom(7);
  r1.next();
  r1.next();
  const r2 = createRandom(7);
  assert.equal(r1.fork('workload').next(), r2.fork('workload').next());
  assert.notEqual(r2.fork('workload').next(), r2.fork('faults').next());
});

test('int, between, pick and weighted stay in range and follow weights', () => {
  const r = createRandom(1);
  const counts = { a: 0, b: 0, c: 0 };
  for (let i = 0; i < 10_000; i++) {
    const x = r.int(10);
    assert.ok(Number.isInteger(x) && x >= 0 && x < 10);
    const y = r.between(3, 5);
    assert.ok(y >= 3 && y <= 5);
    counts[r.weighted({ a: 1, b: 3, c: 0 })]++;
  }
  assert.equal(counts.c, 0);
  assert.ok(counts.b > counts.a * 2 && counts.b < counts.a * 4, JSON.stringify(counts));
  assert.throws(() => r.pick([]));
  assert.throws(() => r.weighted({ a: 0 }));
});

test('durations', () => {
  assert.equal(parseDurationMs('5s'), 5000);
  assert.equal(parseDurationMs('500ms'), 500);
  assert.equal(parseDurationMs('1.5m'), 90_000);
  assert.equal(parseDurationMs(250), 250);
  assert.throws(() => parseDurationMs('5 parsecs'), UsageError);
  assert.throws(() => parseDurationMs(-1), UsageError);
});
