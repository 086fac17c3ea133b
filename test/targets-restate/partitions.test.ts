// Parsing `restatectl partitions list` (1.7.12 output, captured from a real 3-node cluster).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { leadersOf, parsePartitionsList } from '../../src/targets/restate/partitions.js';

const sample = `Alive partition processors (nodes config v12, partition table v1)
 ID  NODE  MODE      STATUS  EPOCH  APPLIED  DURABLE  ARCHIVED  LSN-LAG  SCHEMA  RULE-BOOK  FEATURES    UPDATED
 0   N1:2  Leader    Active  e2     3        0        -         0        v1      -          journal_v2  1 second and 986 ms ago
 0   N3:1  Follower  Active  e2     3        0        -         0        v1      -          journal_v2  2 seconds and 89 ms ago
 1   N1:2  Follower  Active  e2     2        0        -         0        v0      -          journal_v2  1 second and 695 ms ago
 1   N3:1  Leader    Active  e2     7        0        -         0        v1      -          journal_v2  1 second and 547 ms ago
 2   N1:2  Leader    Active  e2     3        0        -         0        v1      -          journal_v2  1 second and 610 ms ago
 2   N2:1  Leader    Active  e3     3        0        -         0        v1      -          journal_v2  2 seconds and 92 ms ago
 3   N1:2  Follower  Active  -      0        0        -         0        v0      -          -           1 second and 645 ms ago
`;

test('parses every processor row with node id, mode, epoch, applied LSN and lag', () => {
  const rows = parsePartitionsList(sample);
  assert.equal(rows.length, 7);
  assert.deepEqual(rows[0], {
    partition: 0,
    nodeId: 1,
    node: 'N1:2',
    mode: 'Leader',
    status: 'Active',
    epoch: 2,
    appliedLsn: 3,
    lsnLag: 0,
  });
  assert.equal(rows[6]!.epoch, undefined);
});

test('leaders: one per partition, the higher epoch wins, leaderless partitions are absent', () => {
  const leaders = leadersOf(parsePartitionsList(sample));
  assert.deepEqual(
    [...leaders.values()].map((l) => `${l.partition}:${l.nodeId}:e${l.epoch}`),
    ['0:1:e2', '1:3:e2', '2:2:e3'],
  );
});

test('output without a table parses to nothing', () => {
  assert.deepEqual(parsePartitionsList('error: could not connect to node\n'), []);
});
