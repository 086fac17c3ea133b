// `--target restate` end to end on one real 3-node cluster (start-up ~10-20 s): the target
// starts behind Toxiproxy, the workload's ops speak Restate's ingress through the client API
// (Restate's invocation ids), leaderOf names a node through the real fabric ports, the
// leadership observer serves its gauges, and a cut of the fabric proxies is seen by calls and
// undone by the heal.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTarget } from '../../src/targets/registry.js';
import { profileOf, type StartedTarget } from '../../src/targets/target.js';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import { createHistoryRecorder } from '../../src/workload/history.js';
import { createHttpClient } from '../../src/workload/http-client.js';
import { callOp, counterAddOp, counterGetOp, sendOp, type OpContext } from '../../src/workload/ops.js';
import { restateClientApi } from '../../src/workload/client-api.js';
import { echoOnce } from '../../src/targets/restate/readiness.js';

const runDir = mkdtempSync(join(tmpdir(), 'limbo-restate-target-'));
let started: StartedTarget | undefined;
const target = (): StartedTarget => {
  assert.ok(started, 'the target started');
  return started;
};

before(async () => {
  started = await createTarget('restate').start({ processors: 3, partitions: 4 }, { runDir });
});

after(async () => {
  await started?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

const RESTATE_ID = /^inv_[0-9A-Za-z]{20,}$/;

function opContext(baseUrl: string): OpContext & { close(): void } {
  const http = createHttpClient({ maxSockets: 8 });
  let n = 0;
  return {
    http,
    history: createHistoryRecorder(createClock()),
    random: createRandom(7),
    process: 0,
    baseUrl,
    opTimeoutMs: 15_000,
    counterKeys: ['tc0'],
    nextKey: () => `target-test-${process.pid}-${n++}`,
    api: restateClientApi,
    close: () => http.close(),
  };
}

test('the restate target names its nodes, links and ingresses, and each ingress serves through its proxy', async () => {
  const t = target();
  assert.deepEqual([...t.services.keys()].sort(), ['node-1', 'node-2', 'node-3', 'service']);
  assert.deepEqual(Object.keys(t.links).sort(), [
    '*->node-1',
    '*->node-2',
    '*->node-3',
    'client->ingress-1',
    'client->ingress-2',
    'client->ingress-3',
    'server->service',
  ]);
  const proxies = Object.keys(await t.toxiproxy.getAll()).sort();
  assert.deepEqual(proxies, Object.values(t.links).sort(), 'every link is a Toxiproxy proxy');
  assert.equal(t.ingressUrls.length, 3);
  for (const url of t.ingressUrls) assert.ok(await echoOnce(url, 10_000), `Echo answers through ${url}`);
  for (const s of ['node-1', 'node-2', 'node-3']) {
    const res = await fetch(t.services.get(s)!.metricsUrl()!, { signal: AbortSignal.timeout(5000) });
    assert.match(await res.text(), /restate_ingress_requests_total/, `${s} serves its real /metrics`);
  }
  assert.ok(
    profileOf(createTarget('restate')).missingSignals['limbo_ingress_pending_requests'],
    'missing signals are named',
  );
});

test('ops speak the Restate ingress and record Restate invocation ids', async () => {
  const ctx = opContext(target().ingressUrls[1]!);
  try {
    const call = await callOp(ctx);
    assert.equal(call.type, 'ok', JSON.stringify(call));
    assert.match(call.invocationId ?? '', RESTATE_ID);
    const sent = await sendOp(ctx);
    assert.equal(sent.type, 'ok', JSON.stringify(sent));
    assert.match(sent.invocationId ?? '', RESTATE_ID);
    const add = await counterAddOp(ctx);
    assert.equal(add.type, 'ok', JSON.stringify(add));
    const get = await counterGetOp(ctx, 'tc0');
    assert.equal(get.type, 'ok');
    assert.equal(get.response?.value, add.response?.value, 'get reads what add answered');
    // The same idempotency key twice: Restate answers with the same invocation.
    const key = ctx.nextKey();
    const a = await callOp({ ...ctx, random: createRandom(3) }, 'idempotentRetry', key);
    const b = await callOp({ ...ctx, random: createRandom(3) }, 'idempotentRetry', key);
    assert.equal(a.invocationId, b.invocationId);
    assert.deepEqual(a.response?.body, b.response?.body);
  } finally {
    ctx.close();
  }
});

test('leaderOf names a node for every partition, and the leadership observer serves the same', async () => {
  const t = target();
  // Both read restatectl, at different moments: poll (bounded) until they agree once. A real
  // Restate cluster can show a partition without a leader for a moment (a Node 24 CI run saw
  // one), so "every partition named" is part of what must hold at once, not of every poll.
  const deadline = Date.now() + 20_000;
  let agree = false;
  let last = '';
  while (!agree && Date.now() < deadline) {
    const leaders = await Promise.all([0, 1, 2, 3].map((p) => t.leaderOf(p)));
    const named = leaders.every((l) => /^node-[123]$/.test(l ?? ''));
    const text = await (await fetch(t.extraMetricsUrls()['leadership']!)).text();
    agree =
      named &&
      leaders.every((l, p) => text.includes(`limbo_processor_is_leader{partition="${p}",node="${l}"} 1`));
    last = `${leaders.join(',')} vs ${text
      .split('\n')
      .filter((x) => x.endsWith(' 1'))
      .join(' ')}`;
    if (!agree) await new Promise((r) => setTimeout(r, 500));
  }
  assert.ok(agree, `leaderOf and the observer agree: ${last}`);
  assert.ok(existsSync(join(runDir, 'leadership.jsonl')));
  assert.match(readFileSync(join(runDir, 'leadership.jsonl'), 'utf8'), /"observer":"node-\d"/);
});

test('cutting the fabric proxies is seen by calls, and the heal undoes it', async () => {
  const t = target();
  // Through the ingress of the node that leads the fewest partitions, most calls need another
  // node; with every `*->node-N` proxy down none can reach one.
  const leaders = await Promise.all([0, 1, 2, 3].map((p) => t.leaderOf(p)));
  const led = (n: number): number => leaders.filter((l) => l === `node-${n}`).length;
  const via = [1, 2, 3].sort((a, b) => led(a) - led(b))[0]!;
  const ingress = t.ingressUrls[via - 1]!;
  assert.ok(led(via) < 4, 'some partition is led by another node');
  const fabric = await Promise.all([1, 2, 3].map((n) => t.toxiproxy.get(t.links[`*->node-${n}`]!)));
  for (const p of fabric) await p.update({ enabled: false, listen: p.listen, upstream: p.upstream });
  try {
    const answered = await Promise.all(Array.from({ length: 16 }, () => echoOnce(ingress, 4000)));
    assert.ok(
      answered.some((ok) => !ok),
      `some calls through node-${via}'s ingress got no answer while the fabric proxies were down`,
    );
  } finally {
    for (const p of fabric) await p.update({ enabled: true, listen: p.listen, upstream: p.upstream });
  }
  const deadline = Date.now() + 90_000;
  let all = false;
  while (!all && Date.now() < deadline)
    all = (await Promise.all(Array.from({ length: 12 }, () => echoOnce(ingress, 5000)))).every(Boolean);
  assert.ok(all, 'after the heal every call through that ingress answers again');
});
