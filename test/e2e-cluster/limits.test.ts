// Overload and deadlines: 503 with retry-after above the pending bound, 504 carrying the
// invocation id when the request deadline passes — and nothing accepted is lost.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, TestCluster } from '../helpers/cluster.js';

let cluster: TestCluster;
before(async () => {
  cluster = await TestCluster.start({
    processors: 2,
    partitions: 2,
    ingressArgs: ['--max-pending', '3', '--request-timeout-ms', '1500'],
  });
  await cluster.waitForLeaders();
});
after(() => cluster?.stop());

test('a request past its deadline gets 504 with the invocation id, and its result can be attached later', async () => {
  const slow = await call(cluster.url, '/Sleep/sleep', { ms: 2500 });
  assert.equal(slow.status, 504);
  const { invocationId } = slow.body as { invocationId: string };
  assert.match(invocationId, /^inv_/);
  assert.equal(slow.invocationId, invocationId);
  const attached = await call(cluster.url, `/invocations/${invocationId}/attach`);
  // The attach itself has the same deadline; the sleep ends within it.
  assert.deepEqual([attached.status, attached.body], [200, { slept: 2500 }]);
});

test('over the pending bound the ingress answers 503 with retry-after', async () => {
  // Exactly the bound (3) of slow calls pending: the next request is one too many.
  const blockers = Array.from({ length: 3 }, () => call(cluster.url, '/Sleep/sleep', { ms: 1000 }));
  const deadline = Date.now() + 5000;
  while ((await cluster.ingressMetric('limbo_ingress_pending_requests')) < 3 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const res = await fetch(`${cluster.url}/Echo/echo`, { method: 'POST', body: '1' });
  assert.equal(res.status, 503);
  assert.equal(res.headers.get('retry-after'), '1');
  await res.arrayBuffer();
  for (const b of await Promise.all(blockers)) assert.equal(b.status, 200);
  assert.equal((await call(cluster.url, '/Echo/echo', 2)).status, 200);
  assert.equal(await cluster.ingressMetric('limbo_ingress_pending_requests'), 0);
  assert.ok((await cluster.ingressMetric('limbo_ingress_requests_total', { outcome: 'overloaded' })) >= 1);
});
