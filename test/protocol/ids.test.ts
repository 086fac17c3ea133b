import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  makeInvocationId,
  partitionKeyOfInvocation,
  partitionOf,
  partitionKeyOf,
  isInvocationId,
} from '../../src/protocol/ids.js';

test('idempotent invocation ids are deterministic and encode the partition key', () => {
  const t = { service: 'Counter', key: 'a', handler: 'add' };
  const a = makeInvocationId(t, 'k1');
  assert.equal(a, makeInvocationId(t, 'k1'));
  assert.notEqual(a, makeInvocationId(t, 'k2'));
  assert.ok(isInvocationId(a));
  assert.equal(partitionKeyOfInvocation(a), partitionKeyOf('Counter/a'));
});

test('keyed calls route by key, plain calls are unique', () => {
  const t = { service: 'Counter', key: 'a', handler: 'add' };
  const x = makeInvocationId(t, undefined);
  const y = makeInvocationId(t, undefined);
  assert.notEqual(x, y);
  assert.equal(partitionKeyOfInvocation(x), partitionKeyOfInvocation(y));
  assert.equal(partitionKeyOfInvocation('nope'), undefined);
});

test('partitions split the key space evenly', () => {
  assert.equal(partitionOf(0, 4), 0);
  assert.equal(partitionOf(2 ** 32 - 1, 4), 3);
  assert.equal(partitionOf(2 ** 31, 4), 2);
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < 4000; i++) counts[partitionOf(partitionKeyOf(`k${i}`), 4)]!++;
  for (const c of counts) assert.ok(c > 800 && c < 1200, String(counts));
});
