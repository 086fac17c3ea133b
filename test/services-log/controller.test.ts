// The controller with two fake processors heartbeating through a real ControllerClient:
// failover within the failure timeout with higher epochs, CAS refusing stale epochs,
// TransferLeadership moving exactly one partition, and epochs surviving a restart.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createControllerClient, grpc, type ControllerClient } from '../../src/transport/grpc.js';
import type { PartitionTable } from '../../src/protocol/wire.js';
import type { StartedProcess } from '../../src/runtime/process.js';
import { FakeProcessor, grpcAddress, metricValue, startLog, TableWatch, tempDir } from './log-harness.js';

const FAILURE_TIMEOUT_MS = 1500;
/** Scheduling slack on a busy 2-core machine: generous, but bounded. */
const MARGIN_MS = 3000;

const dir = tempDir();
let log: StartedProcess;
let controller: ControllerClient;

before(async () => {
  log = await startLog(dir.path, ['--partitions', '4', '--failure-timeout-ms', String(FAILURE_TIMEOUT_MS)]);
  controller = createControllerClient(grpcAddress(log));
});

after(async () => {
  controller?.close();
  await log?.stop();
  dir[Symbol.dispose]();
});

const leaders = (t: PartitionTable): string[] => t.partitions.map((p) => p.leaderNode);
const epochs = (t: PartitionTable): number[] => t.partitions.map((p) => p.epoch);

function grpcCode(code: grpc.status): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.equal((err as grpc.ServiceError).code, code, String(err));
    return true;
  };
}

test('controller: spread, failover, CAS, transfer', async (t) => {
  using watch = new TableWatch(controller);
  using a = new FakeProcessor(controller, 'node-a', '127.0.0.1:1111').start();
  using b = new FakeProcessor(controller, 'node-b', '127.0.0.1:2222').start();

  const spread = await watch.until(
    (tb) =>
      tb.partitions.length === 4 &&
      leaders(tb).filter((l) => l === 'node-a').length === 2 &&
      leaders(tb).filter((l) => l === 'node-b').length === 2,
    10_000,
    'table with two leaderships on each node',
  );
  assert.ok(epochs(spread).every((e) => e >= 1));
  assert.ok(b.beats > 0 && a.beats > 0);
  for (let p = 0; p < 4; p++)
    assert.equal(
      await metricValue(log.ready.addresses.metrics as string, 'limbo_controller_leader_changes_total', {
        partition: String(p),
        reason: 'startup',
      }),
      1,
      `partition ${p}: one startup assignment`,
    );
  for (const p of spread.partitions)
    assert.equal(p.leaderAddress, p.leaderNode === 'node-a' ? '127.0.0.1:1111' : '127.0.0.1:2222');

  await t.test('stable while healthy: no moves while both heartbeat', async () => {
    const before = await controller.getPartitionTable({}, { timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, FAILURE_TIMEOUT_MS * 1.5));
    const later = await controller.getPartitionTable({}, { timeoutMs: 5000 });
    assert.deepEqual(later.partitions, before.partitions);
  });

  await t.test("a silent node's partitions move to the live node with a higher epoch", async () => {
    const before = await controller.getPartitionTable({}, { timeoutMs: 5000 });
    const aHad = before.partitions.filter((p) => p.leaderNode === 'node-a');
    a.stop();
    const stoppedAt = Date.now();
    const moved = await watch.until(
      (tb) => tb.partitions.every((p) => p.leaderNode === 'node-b'),
      FAILURE_TIMEOUT_MS + MARGIN_MS,
      'every partition led by node-b',
    );
    const tookMs = Date.now() - stoppedAt;
    assert.ok(tookMs >= FAILURE_TIMEOUT_MS - 300, `moved after ${tookMs} ms, before the failure timeout`);
    for (const p of aHad) {
      const now = moved.partitions[p.partition]!;
      assert.ok(now.epoch > p.epoch, `partition ${p.partition}: epoch ${now.epoch} not above ${p.epoch}`);
      assert.equal(now.leaderAddress, '127.0.0.1:2222');
    }
    for (const p of before.partitions.filter((x) => x.leaderNode === 'node-b'))
      assert.equal(
        moved.partitions[p.partition]!.epoch,
        p.epoch,
        'partitions of the live node kept their epoch',
      );
    assert.equal(moved.nodes.find((n) => n.node === 'node-a')?.alive, false);
    const failures = await metricValue(
      log.ready.addresses.metrics as string,
      'limbo_controller_leader_changes_total',
      {
        partition: String(aHad[0]!.partition),
        reason: 'failure',
      },
    );
    assert.equal(failures, 1);
    a.start();
    await watch.until(
      (tb) => tb.nodes.find((n) => n.node === 'node-a')?.alive === true,
      5000,
      'node-a alive again',
    );
  });

  await t.test('compare-and-swap refuses a stale epoch', async () => {
    const current = (await controller.getPartitionTable({}, { timeoutMs: 5000 })).partitions[1]!;
    const stale = await controller.compareAndSwapLeader(
      { partition: 1, expectedEpoch: current.epoch - 1, leaderNode: 'node-a' },
      { timeoutMs: 5000 },
    );
    assert.deepEqual(stale, { ok: false, epoch: current.epoch, leaderNode: current.leaderNode });
    const ok = await controller.compareAndSwapLeader(
      { partition: 1, expectedEpoch: current.epoch, leaderNode: 'node-a' },
      { timeoutMs: 5000 },
    );
    assert.deepEqual(ok, { ok: true, epoch: current.epoch + 1, leaderNode: 'node-a' });
    const again = await controller.compareAndSwapLeader(
      { partition: 1, expectedEpoch: current.epoch, leaderNode: 'node-b' },
      { timeoutMs: 5000 },
    );
    assert.equal(again.ok, false, 'the same expected epoch cannot win twice');
    const table = await watch.until(
      (tb) => tb.partitions[1]!.leaderNode === 'node-a',
      5000,
      'CAS result published',
    );
    assert.equal(table.partitions[1]!.epoch, current.epoch + 1);
  });

  await t.test('TransferLeadership moves exactly one partition', async () => {
    const before = await controller.getPartitionTable({}, { timeoutMs: 5000 });
    const p0 = before.partitions[0]!;
    const target = p0.leaderNode === 'node-a' ? 'node-b' : 'node-a';
    const res = await controller.transferLeadership({ partition: 0, node: target }, { timeoutMs: 5000 });
    assert.equal(res.assignment?.leaderNode, target);
    assert.equal(res.assignment?.epoch, p0.epoch + 1);
    const after = await controller.getPartitionTable({}, { timeoutMs: 5000 });
    assert.ok(after.version > before.version);
    assert.deepEqual(after.partitions[0], res.assignment);
    assert.deepEqual(
      after.partitions.slice(1),
      before.partitions.slice(1),
      'the other partitions did not move',
    );
    assert.equal(
      await metricValue(log.ready.addresses.metrics as string, 'limbo_controller_leader_changes_total', {
        partition: '0',
        reason: 'transfer',
      }),
      1,
    );
    await assert.rejects(
      controller.transferLeadership({ partition: 0, node: 'node-nope' }, { timeoutMs: 5000 }),
      grpcCode(grpc.status.FAILED_PRECONDITION),
    );
    await assert.rejects(
      controller.transferLeadership({ partition: 9, node: 'node-a' }, { timeoutMs: 5000 }),
      (err: unknown) => {
        assert.equal((err as grpc.ServiceError).code, grpc.status.INVALID_ARGUMENT);
        assert.match((err as grpc.ServiceError).details, /unknown partition 9 \(partitions 0\.\.3\)/);
        return true;
      },
    );
  });
});

test('a node hosting only some partitions never leads the others', async () => {
  using watch = new TableWatch(controller);
  using c = new FakeProcessor(controller, 'node-c', '127.0.0.1:3333', [3]).start();
  const t = await watch.until(
    (tb) => tb.nodes.some((n) => n.node === 'node-c' && n.alive),
    5000,
    'node-c alive',
  );
  assert.deepEqual(t.nodes.find((n) => n.node === 'node-c')?.partitions, [3]);
  await assert.rejects(
    controller.transferLeadership({ partition: 2, node: 'node-c' }, { timeoutMs: 5000 }),
    (err: unknown) => {
      assert.equal((err as grpc.ServiceError).code, grpc.status.FAILED_PRECONDITION);
      assert.match((err as grpc.ServiceError).details, /node-c" hosts no replica of partition 2/);
      return true;
    },
  );
  const res = await controller.transferLeadership({ partition: 3, node: 'node-c' }, { timeoutMs: 5000 });
  assert.equal(res.assignment?.leaderNode, 'node-c');
  c.stop();
});
