// A leader that dies and comes back faster than the failure timeout is still named leader
// by the controller: the new incarnation must claim a fresh epoch (never reuse the one its
// previous life announced) and serve again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, TestCluster } from '../helpers/cluster.js';
import { keysOnPartition } from '../helpers/keys.js';

test('kill -9 and immediate restart of a leader: it leads again at a higher epoch', async () => {
  await using cluster = await TestCluster.start({ processors: 2, partitions: 2 });
  const before = await cluster.waitForLeaders();
  const a0 = before.partitions.find((p) => p.partition === 0)!;
  const index = cluster.processors.findIndex((p) => p?.ready.node === a0.leaderNode);
  const key = keysOnPartition('Counter', 0, 2, 1, `r${Date.now()}-`)[0]!;
  assert.equal((await call(cluster.url, `/Counter/${key}/add`, { delta: 1 })).body, 1);
  cluster.processors[index]!.kill('SIGKILL');
  await cluster.processors[index]!.exited;
  await cluster.startProcessor(index);
  const during = call(cluster.url, `/Counter/${key}/add`, { delta: 1 }, { timeoutMs: 20_000 });
  const after = await cluster.waitForLeaders(20_000);
  const a1 = after.partitions.find((p) => p.partition === 0)!;
  assert.ok(a1.epoch > a0.epoch, `epoch moved on: ${a0.epoch} → ${a1.epoch}`);
  assert.deepEqual((await during).body, 2);
  assert.equal((await call(cluster.url, `/Counter/${key}/get`, null)).body, 2);
});
