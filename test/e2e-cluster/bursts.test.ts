// Open-loop bursts above capacity, on a real reference cluster whose ingress holds at most 40
// pending requests (--max-pending 40): the steady closed-loop clients alone never hold more
// requests than there are clients and are never refused; a burst fills the ingress up to its
// bound and the rest is refused with 503 and retry-after (limbo_ingress_refused_total{limit=
// "max_pending"} moves only then). The refused ops are `fail` (nothing happened, which
// exactlyOnce holds the cluster to), every pending count drains, and no client is left hanging.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { TestCluster } from '../helpers/cluster.js';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import { scrape, sumSamples } from '../../src/telemetry/prom-text.js';
import { createHistoryRecorder } from '../../src/workload/history.js';
import { startWorkload, type StartedWorkload, type WorkloadSpec } from '../../src/workload/workload.js';
import {
  exactlyOnce,
  keysFreeAfterHeal,
  noClientLeftHanging,
  noImpossibleErrors,
} from '../../src/checkers/index.js';
import type { HistoryOp, RunData } from '../../src/run-data/run-data.js';

const MAX_PENDING = 40;
const CLIENTS = 4;

// A fresh cluster for each test: every counter starts at 0, as in a run.
let cluster: TestCluster;
beforeEach(async () => {
  cluster = await TestCluster.start({
    processors: 2,
    partitions: 2,
    ingressArgs: ['--max-pending', String(MAX_PENDING)],
  });
  await cluster.waitForLeaders();
});
afterEach(() => cluster?.stop());

const steady: WorkloadSpec = {
  concurrency: CLIENTS,
  counterKeys: 4,
  mix: { call: 0.5, send: 0.2, counterAdd: 0.3 },
};

/**
 * Runs the workload for `forMs`, and on until `atLeastOk` ops have answered ok (a loaded machine
 * serves fewer in the same time; bounded at 15 s more), sampling the ingress's pending gauge;
 * returns the history and its peak.
 */
async function run(spec: WorkloadSpec, seed: number, forMs: number, atLeastOk = 0) {
  const history = createHistoryRecorder(createClock());
  const wl: StartedWorkload = startWorkload({
    baseUrls: [cluster.url],
    random: createRandom(seed),
    history,
    ...spec,
  });
  let peak = 0;
  try {
    const until = performance.now() + forMs;
    const latest = until + 15_000;
    const okSoFar = (): number => history.ops.filter((o) => o.type === 'ok').length;
    while (performance.now() < until || (okSoFar() < atLeastOk && performance.now() < latest)) {
      peak = Math.max(peak, await cluster.ingressMetric('limbo_ingress_pending_requests'));
      await delay(20);
    }
    await wl.stop(15_000);
    await wl.finalReads();
  } finally {
    await wl.stop(0);
  }
  assert.equal(history.inFlight(), 0, 'every op ended');
  return { history: [...history.ops], peak, burstOps: wl.burstOps() };
}

async function drained(): Promise<{ ingress: number; processors: number }> {
  const deadline = performance.now() + 5000;
  for (;;) {
    const atIngress = await cluster.ingressMetric('limbo_ingress_pending_requests');
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

function assertChecksPass(history: HistoryOp[]): void {
  const data: RunData = {
    suite: 'bursts',
    target: 'reference',
    seed: 1,
    phases: { startedAtWall: '', healedAtMs: 0, deadlineMs: Math.max(...history.map((o) => o.timeMs)) + 1 },
    history,
    series: [],
    faults: [],
  };
  for (const check of [noClientLeftHanging(), exactlyOnce(), keysFreeAfterHeal(), noImpossibleErrors()]) {
    const r = check.check(data);
    assert.equal(r.verdict, 'pass', `${check.name}: ${r.summary}`);
  }
}

const refused = () => cluster.ingressMetric('limbo_ingress_refused_total', { limit: 'max_pending' });

test('steady closed-loop clients: never more pending than clients, nothing refused', async () => {
  const { history, peak } = await run(steady, 1, 1500, 21);
  assert.ok(history.filter((o) => o.type === 'ok').length > 20);
  assert.ok(peak <= CLIENTS, `peak ${peak} pending with ${CLIENTS} clients`);
  assert.equal(await refused(), 0);
  assert.ok(history.every((o) => o.response?.status !== 503));
  assertChecksPass(history);
});

test('a burst above capacity fills the ingress to its bound; the rest is refused (503), counted, and nothing is left pending', async (t) => {
  const { history, peak, burstOps } = await run(
    {
      ...steady,
      // 480 ops in 0.8 s, on top of the steady clients: far past what this cluster serves.
      bursts: {
        everyMs: 10_000,
        lengthMs: 800,
        ratePerSec: 600,
        firstAtMs: 300,
        mix: { call: 0.6, counterAdd: 0.4 },
      },
    },
    2,
    2000,
  );
  assert.deepEqual(burstOps, { started: 480, skipped: 0 });
  assert.ok(peak > CLIENTS * 4, `the burst held ${peak} requests pending at once (bound ${MAX_PENDING})`);
  const refusedOps = history.filter((o) => o.type !== 'invoke' && o.response?.status === 503);
  const counted = await refused();
  assert.ok(counted >= 1, 'the bound refused requests');
  assert.equal(refusedOps.length, counted, 'each refusal is one refused op');
  for (const o of refusedOps) {
    // A refusal says nothing happened; a send's attach refused after its 202 leaves it unknown.
    if (o.kind === 'send') assert.ok(o.type === 'fail' || o.type === 'info');
    else assert.equal(o.type, 'fail', 'a refusal says nothing happened');
    assert.match(JSON.stringify(o.response?.body), /more than 40 requests pending/);
  }
  assert.ok(
    refusedOps.some((o) => o.kind === 'counterAdd'),
    'refused adds: exactlyOnce holds the cluster to not having applied them',
  );
  t.diagnostic(
    `peak pending ${peak}, refused ${counted} (${refusedOps.filter((o) => o.kind === 'counterAdd').length} adds)`,
  );
  assert.deepEqual(await drained(), { ingress: 0, processors: 0 });
  assertChecksPass(history);
});
