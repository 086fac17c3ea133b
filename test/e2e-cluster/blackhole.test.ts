// Black-hole the ingress→leader connection: the ingress must notice through HTTP/2
// keepalive (ping about every 1 s, dead after about 3 s), resend, and answer every call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, TestCluster } from '../helpers/cluster.js';
import { keysOnPartition } from '../helpers/keys.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

test('a black-holed ingress→leader link is detected by keepalive and the calls are resent', async () => {
  const proxies = await Promise.all([0, 1, 2].map(() => TcpProxy.start()));
  try {
    await using cluster = await TestCluster.start({
      processors: 3,
      partitions: 4,
      startProcessors: false,
      advertise: (i) => proxies[i]!.address,
    });
    for (let i = 0; i < 3; i++) {
      const p = await cluster.startProcessor(i);
      proxies[i]!.setUpstream(p.ready.addresses.grpc as string);
    }
    const table = await cluster.waitForLeaders();
    const leader = table.partitions.find((p) => p.partition === 0)!.leaderNode;
    const proxy = proxies[cluster.processors.findIndex((p) => p?.ready.node === leader)]!;
    // Warm the connection, then start calls that will still be waiting when the link dies.
    assert.equal((await call(cluster.url, '/Echo/echo', 1)).status, 200);
    const keys = keysOnPartition('Sleep', 0, 4, 10, `bh${Date.now()}-`);
    const calls = keys.map((k) =>
      call(
        cluster.url,
        '/Sleep/sleep',
        { ms: 2500 },
        { headers: { 'idempotency-key': k }, timeoutMs: 30_000 },
      ),
    );
    await new Promise((r) => setTimeout(r, 500));
    const before = await cluster.ingressMetric('limbo_ingress_resends_total', {
      partition: '0',
      reason: 'connection_lost',
    });
    proxy.blackhole();
    const cutAt = Date.now();
    let detectedMs: number | undefined;
    while (Date.now() - cutAt < 10_000) {
      const now = await cluster.ingressMetric('limbo_ingress_resends_total', {
        partition: '0',
        reason: 'connection_lost',
      });
      if (now > before) {
        detectedMs = Date.now() - cutAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(detectedMs !== undefined, 'the ingress resent after the link went dark');
    assert.ok(detectedMs >= 1000, `not before keepalive could notice (${detectedMs} ms)`);
    const results = await Promise.all(calls);
    for (const r of results) assert.deepEqual([r.status, r.body], [200, { slept: 2500 }]);
    assert.equal(await cluster.ingressMetric('limbo_ingress_pending_requests'), 0);
  } finally {
    await Promise.all(proxies.map((p) => p.stop()));
  }
});
