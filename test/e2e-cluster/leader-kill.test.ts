// Fixed protocol: kill -9 the leader of a partition while calls are in flight on it.
// Every call is answered, every acknowledged add is applied exactly once, the resend and
// leadership-change metrics moved, and the pending gauge returns to 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, TestCluster, type CallResult } from '../helpers/cluster.js';
import { keysOnPartition } from '../helpers/keys.js';
import { scrape, sumSamples } from '../../src/telemetry/prom-text.js';

test('kill -9 of a leader with 50 calls in flight: all answered, adds exactly once', async () => {
  await using cluster = await TestCluster.start({ processors: 3, partitions: 4 });
  const table = await cluster.waitForLeaders();
  const victim = table.partitions.find((p) => p.partition === 0)!.leaderNode;
  const victimIndex = cluster.processors.findIndex((p) => p?.ready.node === victim);
  assert.ok(victimIndex >= 0);

  // 30 sleeps and 20 counter adds, all routed to partition 0 (idempotency keys / counter keys).
  const sleepKeys = keysOnPartition('Sleep', 0, 4, 30, 'sleep');
  const counterKeys = keysOnPartition('Counter', 0, 4, 4, `c${Date.now()}-`);
  const calls: Promise<CallResult>[] = sleepKeys.map((k) =>
    call(cluster.url, '/Sleep/sleep', { ms: 1500 }, { headers: { 'idempotency-key': k }, timeoutMs: 30_000 }),
  );
  const adds: { key: string; result: Promise<CallResult> }[] = [];
  for (let i = 0; i < 20; i++) {
    const key = counterKeys[i % counterKeys.length]!;
    adds.push({ key, result: call(cluster.url, `/Counter/${key}/add`, { delta: 1 }, { timeoutMs: 30_000 }) });
  }
  await new Promise((r) => setTimeout(r, 300));
  const pendingAtKill = await cluster.ingressMetric('limbo_ingress_pending_requests');
  assert.ok(pendingAtKill > 0, 'calls are in flight when the leader dies');
  cluster.processors[victimIndex]!.kill('SIGKILL');
  // While the partition has no leader its requests are resending: the gauge shows them.
  let resendingSeen = 0;
  for (let i = 0; i < 60 && resendingSeen === 0; i++) {
    resendingSeen = await cluster.ingressMetric('limbo_ingress_resending_requests', { partition: '0' });
    if (resendingSeen === 0) await new Promise((r) => setTimeout(r, 50));
  }

  const sleeps = await Promise.all(calls);
  for (const s of sleeps) assert.deepEqual([s.status, s.body], [200, { slept: 1500 }]);
  const added = await Promise.all(adds.map(async (a) => ({ key: a.key, r: await a.result })));
  for (const a of added) assert.equal(a.r.status, 200, JSON.stringify(a.r.body));

  // Exactly once: per key, the answers are 1..n and the final value is n.
  for (const key of counterKeys) {
    const values = added
      .filter((a) => a.key === key)
      .map((a) => a.r.body as number)
      .sort((x, y) => x - y);
    assert.deepEqual(
      values,
      Array.from({ length: values.length }, (_, i) => i + 1),
      `answers for ${key}`,
    );
    assert.equal((await call(cluster.url, `/Counter/${key}/get`, null)).body, values.length);
  }

  const newTable = await cluster.table();
  const successor = newTable.partitions.find((p) => p.partition === 0)!;
  assert.notEqual(successor.leaderNode, victim);
  assert.ok(successor.epoch > table.partitions.find((p) => p.partition === 0)!.epoch);
  const resends = await cluster.ingressMetric('limbo_ingress_resends_total', { partition: '0' });
  assert.ok(resends > 0, 'the ingress resent');
  // Each request that resent counts once however often it resent, and none resends now.
  assert.ok(resendingSeen > 0, 'requests were seen resending during the outage');
  const resent = await cluster.ingressMetric('limbo_ingress_resent_requests_total', { partition: '0' });
  assert.ok(resent >= resendingSeen && resent <= resends, `${resent} resent requests, ${resends} resends`);
  assert.ok(
    resent <= 2 * 50,
    `${resent} resent requests for 50 calls (a submit and a get_output each at most)`,
  );
  assert.equal(await cluster.ingressMetric('limbo_ingress_resending_requests'), 0);
  assert.equal(await cluster.ingressMetric('limbo_ingress_resent_requests_total', { partition: '1' }), 0);
  const logSamples = await scrape(cluster.log.ready.addresses.metrics as string);
  assert.ok(
    sumSamples(logSamples, 'limbo_controller_leader_changes_total', { partition: '0', reason: 'failure' }) >=
      1,
  );
  const survivor = cluster.processors.find((p) => p?.ready.node === successor.leaderNode)!;
  const pSamples = await scrape(survivor.ready.addresses.metrics as string);
  assert.ok(
    sumSamples(pSamples, 'limbo_processor_leadership_changes_total', {
      partition: '0',
      transition: 'became_leader',
    }) >= 1,
  );
  assert.equal(await cluster.ingressMetric('limbo_ingress_pending_requests'), 0);
  assert.equal(sumSamples(pSamples, 'limbo_processor_pending_rpcs'), 0);
});
