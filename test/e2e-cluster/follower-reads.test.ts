// Followers read the log in batches (--follower-read-delay-ms), leaders and candidates at once:
// a follower is behind for up to the delay, every call is still answered at the leader's
// pace, and a follower handed the leadership reads at once from then on (and the one that
// handed it over reads in batches).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, TestCluster } from '../helpers/cluster.js';
import { keysOnPartition } from '../helpers/keys.js';
import { createControllerClient } from '../../src/transport/grpc.js';
import { scrape, sumSamples } from '../../src/telemetry/prom-text.js';

// The longest delay the log accepts: a call that waited on a batched read would take ≥ 2 s
// (its Invoke and its End each), against a few ms at the leader's pace.
const DELAY_MS = 1000;

test('followers read in batches, the leader at once; a new leader switches to reading at once', async () => {
  await using cluster = await TestCluster.start({
    processors: 3,
    partitions: 2,
    processorArgs: ['--follower-read-delay-ms', String(DELAY_MS)],
  });
  const appliedLsn = async (node: string): Promise<number> => {
    const p = cluster.processors.find((x) => x?.ready.node === node)!;
    return sumSamples(await scrape(p.ready.addresses.metrics as string), 'limbo_processor_applied_lsn', {
      partition: '0',
    });
  };
  const keys = keysOnPartition('Echo', 0, 2, 40, `fr${Date.now()}-`);
  let k = 0;
  /** One Echo call on partition 0: its time, and each node's applied LSN right after. */
  const echo = async (): Promise<{ ms: number; applied: Map<string, number> }> => {
    const t0 = performance.now();
    const r = await call(cluster.url, '/Echo/echo', { k }, { headers: { 'idempotency-key': keys[k++]! } });
    const ms = performance.now() - t0;
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const nodes = cluster.processors.map((p) => p!.ready.node);
    return {
      ms,
      applied: new Map(await Promise.all(nodes.map(async (n) => [n, await appliedLsn(n)] as const))),
    };
  };
  const checkPace = async (leader: string): Promise<void> => {
    const runs = [];
    for (let i = 0; i < 5; i++) runs.push(await echo());
    const ms = runs.map((r) => r.ms).sort((a, b) => a - b);
    assert.ok(
      ms[2]! < DELAY_MS / 2,
      `calls at the leader's pace (median ${ms[2]!.toFixed(0)} ms): ${ms.join(', ')}`,
    );
    // Right after a call, some follower is still behind the leader in at least one of them.
    const behind = runs.filter((r) =>
      [...r.applied].some(([n, lsn]) => n !== leader && lsn < r.applied.get(leader)!),
    );
    assert.ok(
      behind.length > 0,
      `a follower behind the leader after some call: ${JSON.stringify(runs.map((r) => [...r.applied]))}`,
    );
    // …and catches up within about the delay.
    const deadline = Date.now() + 4 * DELAY_MS;
    for (;;) {
      const lsns = await Promise.all(cluster.processors.map((p) => appliedLsn(p!.ready.node)));
      if (lsns.every((l) => l === lsns[0])) break;
      assert.ok(Date.now() < deadline, `replicas converge: ${lsns.join(', ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const table = await cluster.waitForLeaders();
  const first = table.partitions.find((p) => p.partition === 0)!.leaderNode;
  await checkPace(first);

  // Hand partition 0 to a follower: it must read at once from its candidacy on.
  const next = cluster.processors.map((p) => p!.ready.node).find((n) => n !== first)!;
  const controller = createControllerClient(cluster.logAddress);
  try {
    await controller.transferLeadership({ partition: 0, node: next }, { timeoutMs: 5000 });
  } finally {
    controller.close();
  }
  const deadline = Date.now() + 10_000;
  while ((await cluster.leadingPartitions()).get(0) !== next) {
    assert.ok(Date.now() < deadline, `${next} leads partition 0`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await checkPace(next);
});
