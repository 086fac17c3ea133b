// Faults inside a service, on a real cluster: each fault hook is switched on through the
// service's own metrics server (POST /limbo/faults), a metric that moves only under it moves,
// the hook counts the work it acted on, and once it is switched off the cluster serves again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, TestCluster } from '../helpers/cluster.js';
import { keysOnPartition } from '../helpers/keys.js';
import { scrape, sumSamples } from '../../src/telemetry/prom-text.js';
import type { StartedProcess } from '../../src/runtime/process.js';
import { createControllerClient } from '../../src/transport/grpc.js';

const hooksUrl = (p: StartedProcess): string => {
  const u = new URL(p.ready.addresses.metrics as string);
  u.pathname = '/limbo/faults';
  return u.toString();
};

async function hook(
  p: StartedProcess,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(hooksUrl(p), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const metric = async (
  p: StartedProcess,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> => sumSamples(await scrape(p.ready.addresses.metrics as string), name, labels);

/** Polls `probe` every 50 ms until it holds, at most `ms`. */
async function until(what: string, ms: number, probe: () => Promise<boolean>): Promise<void> {
  const t0 = performance.now();
  while (!(await probe())) {
    if (performance.now() - t0 > ms) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const echo = (url: string, key: string, timeoutMs = 20_000) =>
  call(url, '/Echo/echo', { k: key }, { headers: { 'idempotency-key': key }, timeoutMs });

test('fault hooks in the reference cluster reach their paths and heal', { timeout: 180_000 }, async (t) => {
  await using cluster = await TestCluster.start({ processors: 3, partitions: 2 });
  await cluster.waitForLeaders();
  const log = cluster.log;

  await t.test('the route lists hooks, refuses unknown hooks and bad parameters', async () => {
    const res = await fetch(hooksUrl(log), { signal: AbortSignal.timeout(5000) });
    const hooks = ((await res.json()) as { hooks: { hook: string; on: boolean }[] }).hooks;
    assert.deepEqual(hooks.map((h) => h.hook).sort(), [
      'clock.step',
      'controller.table-updates',
      'log.append-error',
      'log.slow-fsync',
      'log.write-error',
    ]);
    assert.ok(
      hooks.every((h) => !h.on),
      'every hook is off until switched on',
    );
    assert.equal((await hook(log, { hook: 'nope' })).status, 400);
    assert.equal((await hook(log, { hook: 'log.slow-fsync', params: { delayMs: -1 } })).status, 400);
    assert.equal((await hook(log, { hook: 'log.slow-fsync', params: {} })).status, 400);
    assert.equal((await hook(log, { hook: 'log.write-error', params: { written: 'half' } })).status, 400);
  });

  await t.test(
    'log.append-error: appends answered UNAVAILABLE, leaders stay, calls finish after',
    async () => {
      const leadersBefore = await cluster.leadingPartitions();
      const errorsBefore = await metric(log, 'limbo_log_append_errors_total', { code: 'unavailable' });
      assert.equal(errorsBefore, 0, 'no append error before the fault');
      assert.equal((await hook(log, { hook: 'log.append-error' })).status, 200);
      const pending = echo(cluster.url, `append-error-${Date.now()}`);
      await until(
        'an append refused',
        10_000,
        async () => (await metric(log, 'limbo_log_append_errors_total')) > 0,
      );
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(await cluster.leadingPartitions(), leadersBefore, 'every leader still leads');
      const off = await hook(log, { hook: 'log.append-error', off: true });
      assert.ok((off.body['hits'] as number) > 0, `the hook acted on appends: ${JSON.stringify(off.body)}`);
      const r = await pending;
      assert.equal(
        r.status,
        200,
        `the call made during the fault is answered after it: ${JSON.stringify(r.body)}`,
      );
      const after = await echo(cluster.url, `after-append-error-${Date.now()}`);
      assert.equal(after.status, 200);
    },
  );

  await t.test('log.slow-fsync: each durable write held back by the delay', async () => {
    const sum0 = await metric(log, 'limbo_log_append_duration_seconds_sum');
    const n0 = await metric(log, 'limbo_log_append_duration_seconds_count');
    assert.equal((await hook(log, { hook: 'log.slow-fsync', params: { delayMs: 400 } })).status, 200);
    const t0 = performance.now();
    const r = await echo(cluster.url, `slow-${Date.now()}`);
    const took = performance.now() - t0;
    const off = await hook(log, { hook: 'log.slow-fsync', off: true });
    assert.equal(r.status, 200);
    assert.ok(took >= 400, `a call waits for at least one slow durable write (${took.toFixed(0)} ms)`);
    const sum1 = await metric(log, 'limbo_log_append_duration_seconds_sum');
    const n1 = await metric(log, 'limbo_log_append_duration_seconds_count');
    assert.ok(n1 > n0);
    assert.ok((sum1 - sum0) / (n1 - n0) >= 0.3, `appends took ≥ 0.3 s on average under the fault`);
    assert.ok((off.body['hits'] as number) > 0);
    const t1 = performance.now();
    assert.equal((await echo(cluster.url, `fast-${Date.now()}`)).status, 200);
    assert.ok(performance.now() - t1 < 400, 'fast again after the heal');
  });

  const transfer = async (partition: number, to: string): Promise<void> => {
    const c = createControllerClient(cluster.logAddress);
    try {
      await c.transferLeadership({ partition, node: to }, { timeoutMs: 5000 });
    } finally {
      c.close();
    }
  };
  const otherThanLeader = async (partition: number): Promise<string> => {
    const leader = (await cluster.table()).partitions.find((p) => p.partition === partition)!.leaderNode;
    return ['processor-1', 'processor-2', 'processor-3'].find((n) => n !== leader)!;
  };
  const lag = async (): Promise<number> =>
    (await metric(log, 'limbo_controller_table_version')) -
    (await metric(cluster.ingress, 'limbo_ingress_table_version'));

  await t.test('controller.table-updates drop: the ingress lags the controller until healed', async () => {
    assert.equal(await lag(), 0, 'the ingress has the controller’s table');
    assert.equal(
      (await hook(log, { hook: 'controller.table-updates', params: { how: 'drop' } })).status,
      200,
    );
    await transfer(0, await otherThanLeader(0));
    await until('the controller published a newer table', 5000, async () => (await lag()) > 0);
    await new Promise((r) => setTimeout(r, 500));
    assert.ok((await lag()) > 0, 'the ingress still routes by the old table');
    // Calls still reach the new leader (NOT_LEADER names it).
    const [key] = keysOnPartition('Echo', 0, 2, 1, `drop-${Date.now()}-`);
    const r = await call(
      cluster.url,
      `/Echo/echo`,
      {},
      { headers: { 'idempotency-key': key! }, timeoutMs: 20_000 },
    );
    assert.equal(r.status, 200);
    const off = await hook(log, { hook: 'controller.table-updates', off: true });
    assert.ok((off.body['hits'] as number) > 0);
    await transfer(0, await otherThanLeader(0));
    await until('the ingress caught up after the heal', 5000, async () => (await lag()) === 0);
    await cluster.waitForLeaders();
  });

  await t.test('controller.table-updates reorder: an older table arrives after a newer one', async () => {
    const stale0 = await metric(cluster.ingress, 'limbo_ingress_stale_tables_total');
    assert.equal(
      (await hook(log, { hook: 'controller.table-updates', params: { how: 'reorder', delayMs: 3000 } }))
        .status,
      200,
    );
    await transfer(1, await otherThanLeader(1));
    await new Promise((r) => setTimeout(r, 200));
    await transfer(0, await otherThanLeader(0));
    await until('an older table was set aside', 10_000, async () => {
      return (await metric(cluster.ingress, 'limbo_ingress_stale_tables_total')) > stale0;
    });
    await hook(log, { hook: 'controller.table-updates', off: true });
    await until('the ingress routes by the newest table', 5000, async () => (await lag()) === 0);
    await cluster.waitForLeaders();
  });

  const byName = (node: string): StartedProcess =>
    cluster.processors.find((p) => p?.ready.node === node) as StartedProcess;

  for (const steps of [['announce'], ['catch-up'], ['resume'], ['resume', 'claim']]) {
    await t.test(
      `processor.leadership-step ${steps.join('+')}: fails that step, leads after the heal`,
      async () => {
        await cluster.waitForLeaders();
        const to = await otherThanLeader(1);
        const p = byName(to);
        const failures = async (step: string): Promise<number> =>
          metric(p, 'limbo_processor_leadership_step_failures_total', { partition: '1', step });
        const before = await Promise.all(steps.map(failures));
        assert.equal(
          (await hook(p, { hook: 'processor.leadership-step', params: { steps, partitions: [1] } })).status,
          200,
        );
        await transfer(1, to);
        for (const [i, step] of steps.entries())
          await until(`step ${step} failed`, 10_000, async () => (await failures(step)) > before[i]!);
        assert.notEqual(
          (await cluster.leadingPartitions()).get(1),
          to,
          `${to} does not lead while its steps fail`,
        );
        const off = await hook(p, { hook: 'processor.leadership-step', off: true });
        assert.ok((off.body['hits'] as number) > 0);
        await until(`${to} leads partition 1 after the heal`, 10_000, async () => {
          return (await cluster.leadingPartitions()).get(1) === to;
        });
        const [key] = keysOnPartition('Echo', 1, 2, 1, `step-${steps.join('-')}-${Date.now()}-`);
        const r = await call(
          cluster.url,
          `/Echo/echo`,
          {},
          { headers: { 'idempotency-key': key! }, timeoutMs: 20_000 },
        );
        assert.equal(r.status, 200);
      },
    );
  }

  await t.test(
    'clock.step: the wall clock of one service is offset while performance.now is not',
    async () => {
      const p = cluster.processors[0]!;
      assert.equal((await hook(p, { hook: 'clock.step', params: { offsetMs: 7_200_000 } })).status, 200);
      assert.equal(await metric(p, 'limbo_clock_offset_seconds'), 7200);
      for (let i = 0; i < 5; i++)
        assert.equal((await echo(cluster.url, `clock-${i}-${Date.now()}`)).status, 200);
      const off = await hook(p, { hook: 'clock.step', off: true });
      assert.ok((off.body['hits'] as number) > 0, 'the stepped clock was read');
      assert.equal(await metric(p, 'limbo_clock_offset_seconds'), 0);
    },
  );
});

// Its own cluster: the partitions it fails and recovers leave retried appends behind, which
// the other hooks' measurements (slow-fsync's average append time) must not meet.
test(
  'log.write-error (all written): writes fail, partitions recover from their files finding the records, calls finish after',
  { timeout: 120_000 },
  async () => {
    await using cluster = await TestCluster.start({ processors: 3, partitions: 2 });
    await cluster.waitForLeaders();
    const log = cluster.log;
    const recoveredBefore = await metric(log, 'limbo_log_recovered_records_total');
    assert.equal(recoveredBefore, 0, 'nothing recovered before the fault');
    assert.equal((await hook(log, { hook: 'log.write-error', params: { written: 'all' } })).status, 200);
    const pending = echo(cluster.url, `write-error-${Date.now()}`);
    await until(
      'a partition recovered, finding what a failed write left',
      10_000,
      async () =>
        (await metric(log, 'limbo_log_recoveries_total')) > 0 &&
        (await metric(log, 'limbo_log_recovered_records_total')) > 0,
    );
    const off = await hook(log, { hook: 'log.write-error', off: true });
    assert.ok((off.body['hits'] as number) > 0, `the hook failed writes: ${JSON.stringify(off.body)}`);
    const r = await pending;
    assert.equal(
      r.status,
      200,
      `the call made during the fault is answered after it: ${JSON.stringify(r.body)}`,
    );
    assert.equal((await echo(cluster.url, `after-write-error-${Date.now()}`)).status, 200);
  },
);
