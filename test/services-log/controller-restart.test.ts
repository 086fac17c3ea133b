// Metadata survives kill -9: after a restart the leaders and epochs come back from disk,
// a leader not yet heard from is kept for one failure timeout, then moved with a higher
// epoch; epochs never go backwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createControllerClient } from '../../src/transport/grpc.js';
import type { PartitionTable } from '../../src/protocol/wire.js';
import { crash, FakeProcessor, grpcAddress, sleep, startLog, TableWatch, tempDir } from './log-harness.js';

const FAILURE_TIMEOUT_MS = 1500;
const args = ['--partitions', '4', '--failure-timeout-ms', String(FAILURE_TIMEOUT_MS)];

const view = (t: PartitionTable): { leader: string; epoch: number }[] =>
  t.partitions.map((p) => ({ leader: p.leaderNode, epoch: p.epoch }));

test('leaders and epochs survive kill -9 and restart', async () => {
  using dir = tempDir();
  // Run 1: two nodes share the partitions; a few transfers push the epochs up.
  const first = await startLog(dir.path, args);
  const c1 = createControllerClient(grpcAddress(first));
  let before: PartitionTable;
  {
    using watch = new TableWatch(c1);
    using _a = new FakeProcessor(c1, 'node-a', '127.0.0.1:1111').start();
    using _b = new FakeProcessor(c1, 'node-b', '127.0.0.1:2222').start();
    await watch.until((t) => t.partitions.every((p) => p.leaderNode !== ''), 10_000, 'leaders');
    for (const node of ['node-a', 'node-b', 'node-a'])
      await c1.transferLeadership({ partition: 0, node }, { timeoutMs: 5000 });
    before = await c1.getPartitionTable({}, { timeoutMs: 5000 });
    assert.equal(before.partitions[0]!.leaderNode, 'node-a');
    assert.ok(before.partitions[0]!.epoch >= 4);
  }
  c1.close();
  await crash(first);

  // Run 2: the metadata is back at once, before any heartbeat.
  const second = await startLog(dir.path, args);
  const readyAt = Date.now();
  const c2 = createControllerClient(grpcAddress(second));
  try {
    const restored = await c2.getPartitionTable({}, { timeoutMs: 5000 });
    assert.deepEqual(view(restored), view(before));
    using watch = new TableWatch(c2);
    // Only node-b comes back. node-a keeps its leaderships for one failure timeout after start.
    using _b = new FakeProcessor(c2, 'node-b', '127.0.0.1:2222').start();
    await sleep(FAILURE_TIMEOUT_MS / 3);
    const early = await c2.getPartitionTable({}, { timeoutMs: 5000 });
    if (Date.now() - readyAt < FAILURE_TIMEOUT_MS * 0.9)
      assert.deepEqual(view(early), view(before), 'a leader was moved before a failure timeout since start');
    const moved = await watch.until(
      (t) => t.partitions.every((p) => p.leaderNode === 'node-b'),
      FAILURE_TIMEOUT_MS + 5000,
      'every partition led by node-b',
    );
    assert.ok(Date.now() - readyAt >= FAILURE_TIMEOUT_MS - 300, 'moved before the failure timeout');
    before.partitions.forEach((p, i) => {
      const now = moved.partitions[i]!;
      if (p.leaderNode === 'node-a')
        assert.equal(now.epoch, p.epoch + 1, `partition ${i} moved with epoch+1`);
      else assert.equal(now.epoch, p.epoch, `partition ${i} stayed with node-b at its epoch`);
    });
    // The old epoch is stale now.
    const stale = await c2.compareAndSwapLeader(
      { partition: 0, expectedEpoch: before.partitions[0]!.epoch, leaderNode: 'node-a' },
      { timeoutMs: 5000 },
    );
    assert.equal(stale.ok, false);
    c2.close();
    await crash(second);

    // Run 3: the epochs of run 2 are there: never backwards.
    const third = await startLog(dir.path, args);
    const c3 = createControllerClient(grpcAddress(third));
    try {
      const again = await c3.getPartitionTable({}, { timeoutMs: 5000 });
      assert.deepEqual(view(again), view(moved));
    } finally {
      c3.close();
      await third.stop();
    }
  } finally {
    c2.close();
    await second.stop();
  }
});
