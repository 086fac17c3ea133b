// The seed's scenario: clients call and send before any processor leads.
// Legacy protocol: the notifications are never sent and the clients hang (bounded wait).
// Fixed protocol: every request is answered once the processors are up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, TestCluster } from '../helpers/cluster.js';

const HANG_BOUND_MS = 6000;

async function race(
  protocol: 'rpc' | 'legacy',
): Promise<{ answered: number; hung: number; pendingGauge: number }> {
  await using cluster = await TestCluster.start({
    processors: 3,
    partitions: 4,
    protocol,
    startProcessors: false,
  });
  // Let the ingress learn the (leaderless) partition table first.
  await new Promise((r) => setTimeout(r, 500));
  const requests = [
    ...Array.from({ length: 6 }, (_, i) =>
      call(cluster.url, '/Echo/echo/send', { i }, { timeoutMs: HANG_BOUND_MS + 4000 }),
    ),
    ...Array.from({ length: 4 }, (_, i) =>
      call(cluster.url, '/Echo/echo', { i }, { timeoutMs: HANG_BOUND_MS + 4000 }),
    ),
  ];
  await new Promise((r) => setTimeout(r, 500));
  await cluster.startProcessors();
  await cluster.waitForLeaders();
  // Give every request time to be answered, then look at the gauge while the clients still wait.
  const started = Date.now();
  await Promise.race([Promise.allSettled(requests), new Promise((r) => setTimeout(r, HANG_BOUND_MS - 2000))]);
  const pendingGauge = await cluster.ingressMetric('limbo_ingress_pending_requests');
  assert.ok(Date.now() - started < HANG_BOUND_MS, 'gauge read before the clients give up');
  const settled = await Promise.allSettled(requests);
  const answered = settled.filter((s) => s.status === 'fulfilled' && s.value.status < 300).length;
  const hung = settled.filter(
    (s) => s.status === 'rejected' && (s.reason as Error).name === 'TimeoutError',
  ).length;
  return { answered, hung, pendingGauge };
}

test('legacy protocol: sends made before any leader hang forever', async () => {
  const r = await race('legacy');
  assert.ok(r.hung >= 6, `at least the 6 sends hang (got ${JSON.stringify(r)})`);
  assert.ok(r.pendingGauge >= 6, `the pending gauge shows them (got ${r.pendingGauge})`);
});

test('fixed protocol: the same race leaves nobody hanging', async () => {
  const r = await race('rpc');
  assert.deepEqual(r, { answered: 10, hung: 0, pendingGauge: 0 });
});
