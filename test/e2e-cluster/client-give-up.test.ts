// Clients that give up, on a real reference cluster: the workload abandons some requests
// mid-flight (socket destroyed before the answer), then sends them again with the same key or
// walks away. The ingress counts each client that went away (limbo_ingress_client_gone_total,
// by how far its request had gone), which moves only when clients give up; the processors'
// calls are cancelled and every pending count drains; the retry gets the one invocation's
// answer and every counter effect is applied exactly once.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { TestCluster } from '../helpers/cluster.js';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import { scrape, sumSamples } from '../../src/telemetry/prom-text.js';
import { createHistoryRecorder } from '../../src/workload/history.js';
import { startWorkload, type WorkloadSpec } from '../../src/workload/workload.js';
import {
  errorAnswersBounded,
  exactlyOnce,
  keysFreeAfterHeal,
  noClientLeftHanging,
} from '../../src/checkers/index.js';
import type { HistoryOp, RunData } from '../../src/run-data/run-data.js';

// A fresh cluster for each test: every counter starts at 0, as in a run.
let cluster: TestCluster;
beforeEach(async () => {
  cluster = await TestCluster.start({ processors: 2, partitions: 2 });
  await cluster.waitForLeaders();
});
afterEach(() => cluster?.stop());

const steady: WorkloadSpec = {
  concurrency: 6,
  counterKeys: 4,
  // Adds hold their key up to 100 ms, so some are given up while the processor runs them.
  counterHoldMs: 100,
  mix: { call: 0.4, send: 0.3, counterAdd: 0.3 },
};

/**
 * The workload for `forMs`, then on (at most 8 s more) until `enough` says the history holds what
 * the test needs: a loaded machine makes fewer ops in the same time.
 */
async function run(
  spec: WorkloadSpec,
  seed: number,
  forMs: number,
  enough?: (ops: readonly HistoryOp[]) => boolean,
): Promise<HistoryOp[]> {
  const history = createHistoryRecorder(createClock());
  const wl = startWorkload({ baseUrls: [cluster.url], random: createRandom(seed), history, ...spec });
  try {
    await delay(forMs);
    for (let waited = 0; enough !== undefined && !enough(history.ops) && waited < 8000; waited += 100)
      await delay(100);
    await wl.stop(10_000);
    await wl.finalReads();
  } finally {
    await wl.stop(0);
  }
  assert.equal(history.inFlight(), 0, 'every op ended');
  return [...history.ops];
}

async function ingress(name: string, labels: Record<string, string> = {}): Promise<number> {
  return cluster.ingressMetric(name, labels);
}

/** Waits (bounded) until the ingress and every processor hold nothing pending. */
async function drained(): Promise<{ ingress: number; processors: number }> {
  const deadline = performance.now() + 5000;
  for (;;) {
    const atIngress = await ingress('limbo_ingress_pending_requests');
    let atProcessors = 0;
    for (const p of cluster.processors)
      if (p?.isRunning())
        atProcessors += sumSamples(
          await scrape(p.ready.addresses.metrics as string),
          'limbo_processor_pending_rpcs',
        );
    if ((atIngress === 0 && atProcessors === 0) || performance.now() > deadline)
      return { ingress: atIngress, processors: atProcessors };
    await delay(50);
  }
}

function runData(history: HistoryOp[]): RunData {
  return {
    suite: 'client-give-up',
    target: 'reference',
    seed: 1,
    phases: { startedAtWall: '', healedAtMs: 0, deadlineMs: Math.max(...history.map((o) => o.timeMs)) + 1 },
    history,
    series: [],
    faults: [],
  };
}

function assertChecksPass(history: HistoryOp[]): void {
  const data = runData(history);
  for (const check of [noClientLeftHanging(), exactlyOnce(), keysFreeAfterHeal(), errorAnswersBounded()]) {
    const r = check.check(data);
    assert.equal(r.verdict, 'pass', `${check.name}: ${r.summary}`);
  }
}

const abandonedOf = (history: readonly HistoryOp[]) =>
  history.filter((o) => o.type === 'info' && o.error?.code === 'aborted');

test('clients that never give up: no client went away', async () => {
  const history = await run(steady, 1, 1500);
  assert.ok(history.filter((o) => o.type === 'ok').length > 20, 'the steady clients were served');
  assert.equal(abandonedOf(history).length, 0);
  assert.equal(await ingress('limbo_ingress_client_gone_total'), 0);
  assert.equal(await ingress('limbo_ingress_requests_total', { outcome: 'aborted' }), 0);
  assertChecksPass(history);
});

test("give-ups retried with the same key: the ingress sees clients go away, the processors' calls are cancelled, each retry gets the one invocation's answer", async (t) => {
  const before = await ingress('limbo_ingress_client_gone_total');
  const history = await run(
    { ...steady, giveUp: { fraction: 0.3, afterMs: [5, 80], retry: 'same-key' } },
    2,
    2500,
    (ops) => abandonedOf(ops).length >= 10,
  );
  const abandoned = abandonedOf(history);
  assert.ok(abandoned.length >= 10, `${abandoned.length} ops given up`);
  // Every abandoned op was sent again with its key, by the same client, and answered ok.
  const byKey = new Map<string, HistoryOp[]>();
  for (const o of history)
    if (o.type !== 'invoke' && o.request?.idempotencyKey !== undefined)
      byKey.set(o.request.idempotencyKey, [...(byKey.get(o.request.idempotencyKey) ?? []), o]);
  for (const a of abandoned) {
    const same = byKey.get(a.request!.idempotencyKey!)!;
    const retry = same[same.indexOf(a) + 1];
    assert.ok(retry !== undefined, `op ${a.opId} was retried`);
    assert.deepEqual([retry.kind, retry.process, retry.type], [a.kind, a.process, 'ok']);
    assert.equal(retry.invocationId, a.invocationId, 'the retry was answered as the same invocation');
  }
  const gone = (await ingress('limbo_ingress_client_gone_total')) - before;
  assert.ok(
    gone >= 1 && gone <= abandoned.length,
    `${gone} requests lost their client, ${abandoned.length} ops given up`,
  );
  assert.ok(
    (await ingress('limbo_ingress_client_gone_total', { stage: 'processor' })) >= 1,
    'some left while a processor held the request',
  );
  // Each of those either had its work cut short (499, outcome aborted) or had its answer ready
  // just as the client left (counted ok, never written).
  const aborted = await ingress('limbo_ingress_requests_total', { outcome: 'aborted' });
  assert.ok(aborted >= 1 && aborted <= gone, `${aborted} aborted of ${gone}`);
  t.diagnostic(
    `${abandoned.length} ops given up; client gone: ${gone}, at a processor: ${await ingress('limbo_ingress_client_gone_total', { stage: 'processor' })}`,
  );
  assert.deepEqual(await drained(), { ingress: 0, processors: 0 }, 'nothing is left pending');
  assertChecksPass(history);
});

test("give-ups with retry 'none': the clients walk away, and the effects they left behind are each applied at most once", async () => {
  const before = await ingress('limbo_ingress_client_gone_total');
  const history = await run(
    { ...steady, giveUp: { fraction: 0.3, afterMs: [5, 80], retry: 'none' } },
    3,
    2000,
  );
  const abandoned = abandonedOf(history);
  assert.ok(abandoned.length >= 5, `${abandoned.length} ops given up`);
  const keys = history.filter((o) => o.type === 'invoke').map((o) => o.request?.idempotencyKey);
  for (const a of abandoned)
    assert.equal(
      keys.filter((k) => k === a.request!.idempotencyKey).length,
      1,
      `op ${a.opId} was not sent again`,
    );
  assert.ok((await ingress('limbo_ingress_client_gone_total')) - before >= 1);
  assert.deepEqual(await drained(), { ingress: 0, processors: 0 });
  assertChecksPass(history);
});
