import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PendingTable } from '../../src/services/ingress/pending-table.js';

test('the pending table counts requests until they leave, each once', () => {
  const t = new PendingTable();
  const a = t.add('call', 100);
  const b = t.add('send', 200);
  assert.notEqual(a, b);
  assert.equal(t.size, 2);
  assert.equal(t.delete(a), true);
  assert.equal(t.delete(a), false, 'a request leaves the table once');
  assert.equal(t.size, 1);
  assert.equal(t.delete(b), true);
  assert.equal(t.size, 0);
});

test('the oldest pending age is that of the earliest request still in the table', () => {
  const t = new PendingTable();
  assert.equal(t.oldestAgeSeconds(5000), 0, 'empty: 0');
  const first = t.add('call', 1000);
  t.add('attach', 3000);
  assert.equal(t.oldestAgeSeconds(5000), 4);
  t.delete(first);
  assert.equal(t.oldestAgeSeconds(5000), 2);
  // An id out of order in time (never in practice) still counts by its start.
  t.add('output', 500);
  assert.equal(t.oldestAgeSeconds(5000), 4.5);
});
