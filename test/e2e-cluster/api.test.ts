// The ingress HTTP API over a real cluster (log, 3 processors, ingress as child processes).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, TestCluster } from '../helpers/cluster.js';
import { sleep } from '../../src/util/backoff.js';

let cluster: TestCluster;
before(async () => {
  cluster = await TestCluster.start({ processors: 3, partitions: 4 });
  await cluster.waitForLeaders();
});
after(() => cluster?.stop());

test('every built-in service answers a call', async () => {
  const echo = await call(cluster.url, '/Echo/echo', { hello: 'world' });
  assert.equal(echo.status, 200);
  assert.deepEqual(echo.body, { hello: 'world' });
  assert.match(echo.invocationId ?? '', /^inv_[0-9a-f]{8}_/);

  const slept = await call(cluster.url, '/Sleep/sleep', { ms: 50 });
  assert.deepEqual([slept.status, slept.body], [200, { slept: 50 }]);

  const key = `k-${Date.now()}`;
  assert.deepEqual((await call(cluster.url, `/Counter/${key}/add`, { delta: 2 })).body, 2);
  assert.deepEqual((await call(cluster.url, `/Counter/${key}/add`, { delta: 3 })).body, 5);
  assert.deepEqual((await call(cluster.url, `/Counter/${key}/get`, null)).body, 5);

  const flaky = await call(cluster.url, '/Flaky/call', { failFirst: 2 });
  assert.deepEqual([flaky.status, flaky.body], [200, { attempts: 3 }]);
});

test('a counter add with holdMs holds its key: the next add on that key waits for it, others do not', async () => {
  const key = `hold-${Date.now()}`;
  const t0 = performance.now();
  const held = call(cluster.url, `/Counter/${key}/add`, { delta: 1, holdMs: 600 });
  await new Promise((r) => setTimeout(r, 100));
  const queued = call(cluster.url, `/Counter/${key}/add`, { delta: 10 });
  const other = await call(cluster.url, `/Counter/${key}-other/add`, { delta: 5 });
  const otherMs = performance.now() - t0;
  assert.deepEqual([(await held).body, (await queued).body, other.body], [1, 11, 5]);
  const queuedMs = performance.now() - t0;
  assert.ok(queuedMs >= 590, `the add behind the held key ended after the hold (${queuedMs.toFixed(0)} ms)`);
  assert.ok(otherMs < queuedMs, 'another key was not held up');
  const bad = await call(cluster.url, `/Counter/${key}/add`, { delta: 1, holdMs: -1 });
  assert.equal(bad.status, 400);
});

test('send answers 202 once submitted; attach and output give the result', async () => {
  const sent = await call(cluster.url, '/Sleep/sleep/send', { ms: 300 });
  assert.equal(sent.status, 202);
  const { invocationId, status } = sent.body as { invocationId: string; status: string };
  assert.equal(status, 'Accepted');
  assert.equal(sent.invocationId, invocationId);

  const early = await call(cluster.url, `/invocations/${invocationId}/output`);
  assert.equal(early.status, 202);
  assert.deepEqual(early.body, { invocationId, status: 'Pending' });

  const attached = await call(cluster.url, `/invocations/${invocationId}/attach`);
  assert.deepEqual([attached.status, attached.body], [200, { slept: 300 }]);
  const output = await call(cluster.url, `/invocations/${invocationId}/output`);
  assert.deepEqual([output.status, output.body], [200, { slept: 300 }]);
});

test('the same idempotency key twice gives one invocation and the same result', async () => {
  const key = `idem-${Date.now()}`;
  const headers = { 'idempotency-key': 'once' };
  const a = await call(cluster.url, `/Counter/${key}/add`, { delta: 7 }, { headers });
  const b = await call(cluster.url, `/Counter/${key}/add`, { delta: 7 }, { headers });
  assert.equal(a.invocationId, b.invocationId);
  assert.deepEqual([a.body, b.body], [7, 7]);
  assert.deepEqual((await call(cluster.url, `/Counter/${key}/get`, null)).body, 7);

  const s1 = await call(
    cluster.url,
    `/Counter/${key}/add/send`,
    { delta: 1 },
    { headers: { 'idempotency-key': 's' } },
  );
  const s2 = await call(
    cluster.url,
    `/Counter/${key}/add/send`,
    { delta: 1 },
    { headers: { 'idempotency-key': 's' } },
  );
  assert.equal((s1.body as { status: string }).status, 'Accepted');
  assert.equal((s2.body as { status: string }).status, 'PreviouslyAccepted');
  assert.equal(
    (s1.body as { invocationId: string }).invocationId,
    (s2.body as { invocationId: string }).invocationId,
  );
});

test('bad input gets a clear status and the ingress keeps serving', async () => {
  const bad = await call(cluster.url, '/Echo/echo', undefined, { raw: '{nope' });
  assert.equal(bad.status, 400);
  assert.match((bad.body as { error: string }).error, /malformed JSON/);
  assert.equal((await call(cluster.url, '/Nope/echo', {})).status, 404);
  assert.equal((await call(cluster.url, '/Echo/nope', {})).status, 404);
  assert.equal((await call(cluster.url, '/Counter/add', {})).status, 404);
  assert.equal((await call(cluster.url, '/Echo/echo', undefined, { method: 'GET' })).status, 405);
  const big = await call(cluster.url, '/Echo/echo', undefined, {
    raw: JSON.stringify('x'.repeat(1024 * 1024 + 10)),
  });
  assert.equal(big.status, 413);
  assert.equal((await call(cluster.url, '/invocations/garbage/output')).status, 400);
  assert.equal((await call(cluster.url, '/invocations/inv_00000000_abc/output')).status, 404);
  const sleepBad = await call(cluster.url, '/Sleep/sleep', { ms: 'x' });
  // A bad argument is the client's error: 400 naming the field, before anything is appended.
  assert.equal(sleepBad.status, 400);
  assert.equal((sleepBad.body as { field: string }).field, 'ms');
  assert.match((sleepBad.body as { error: string }).error, /"ms" must be an integer/);
  assert.equal((await call(cluster.url, '/Echo/echo', 1)).status, 200);
});

test('metrics: requests counted, nothing left pending', async () => {
  assert.ok(
    (await cluster.ingressMetric('limbo_ingress_requests_total', { kind: 'call', outcome: 'ok' })) >= 6,
  );
  assert.equal(await cluster.ingressMetric('limbo_ingress_pending_requests'), 0);
  assert.equal(await cluster.ingressMetric('limbo_ingress_oldest_pending_seconds'), 0);
  assert.ok((await cluster.ingressMetric('limbo_ingress_rpc_attempts_total', { result: 'ok' })) > 0);
});

test('services warn of no listener pile-up after many heartbeats', async () => {
  // Each heartbeat (every 100 ms) once left an abort listener on the processor's own signal:
  // Node warned after the 11th ("MaxListenersExceededWarning") and the listeners grew for the
  // process's whole life. Two seconds is twenty heartbeats.
  await sleep(2000);
  for (const p of [cluster.log, cluster.ingress, ...cluster.processors]) {
    assert.ok(p, 'the service started');
    assert.doesNotMatch(p.tail(), /MaxListenersExceeded/, `${p.name}: ${p.tail(5)}`);
  }
});
