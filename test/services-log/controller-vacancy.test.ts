// With no live replica a partition is published leaderless at its current epoch (no bump
// while nobody can lead); the first replica back takes it with epoch + 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createControllerClient } from '../../src/transport/grpc.js';
import { FakeProcessor, grpcAddress, startLog, TableWatch, tempDir } from './log-harness.js';

const FAILURE_TIMEOUT_MS = 1000;

test('no live replica: leaderless at the same epoch, then epoch + 1 when one returns', async () => {
  using dir = tempDir();
  const log = await startLog(dir.path, [
    '--partitions',
    '2',
    '--failure-timeout-ms',
    String(FAILURE_TIMEOUT_MS),
  ]);
  const controller = createControllerClient(grpcAddress(log));
  try {
    using watch = new TableWatch(controller);
    const only = new FakeProcessor(controller, 'node-x', '127.0.0.1:4444').start();
    const led = await watch.until(
      (t) => t.partitions.every((p) => p.leaderNode === 'node-x'),
      10_000,
      'node-x leading',
    );
    only.stop();
    const vacant = await watch.until(
      (t) => t.partitions.every((p) => p.leaderNode === '' && p.leaderAddress === ''),
      FAILURE_TIMEOUT_MS + 5000,
      'leaderless table',
    );
    assert.deepEqual(
      vacant.partitions.map((p) => p.epoch),
      led.partitions.map((p) => p.epoch),
      'no epoch bump while nobody can lead',
    );
    assert.equal(vacant.nodes.find((n) => n.node === 'node-x')?.alive, false);
    using _back = new FakeProcessor(controller, 'node-x', '127.0.0.1:4445').start();
    const back = await watch.until(
      (t) => t.partitions.every((p) => p.leaderNode === 'node-x'),
      5000,
      'node-x leading again',
    );
    back.partitions.forEach((p, i) => {
      assert.equal(p.epoch, led.partitions[i]!.epoch + 1, `partition ${i}: a new term`);
      assert.equal(p.leaderAddress, '127.0.0.1:4445', 'the address of the latest heartbeat');
    });
  } finally {
    controller.close();
    await log.stop();
  }
});
