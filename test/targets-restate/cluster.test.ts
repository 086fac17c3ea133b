// A real 3-node Restate cluster (restate-server from npm) with the SDK endpoint, every node's
// fabric port and the endpoint behind a TCP proxy (the way the testbed will put Toxiproxy
// there): calls through every ingress, send + attach, partition leaders, metrics, kill -9 of
// the busiest leader while calls are in flight, restart, and cleanup. One cluster for the
// whole file (start-up ~10-20 s).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startRestateCluster, type StartedRestateCluster } from '../../src/targets/restate/cluster.js';
import { listPartitions } from '../../src/targets/restate/partitions.js';
import { scrape, sumSamples } from '../../src/telemetry/prom-text.js';
import { sleep } from '../../src/util/backoff.js';
import { runRestatectl } from '../../src/targets/restate/restatectl.js';
import { restateExtraSignals, restateSignals } from '../../src/targets/restate/signals.js';
import { get, pidAlive, post, type HttpResult } from '../helpers/restate.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

const PARTITIONS = 8;
/** Every call after the kill must be answered within this (Restate's failover took ~1-3 s here). */
const CALL_BOUND_MS = 30_000;

const runDir = mkdtempSync(join(tmpdir(), 'limbo-restate-test-'));
let started: StartedRestateCluster | undefined;
const proxies: TcpProxy[] = [];
/** A TCP proxy to `url`'s host:port, as the same kind of URL. */
async function proxyTo(url: string): Promise<string> {
  const proxy = await TcpProxy.start();
  proxies.push(proxy);
  proxy.setUpstream(new URL(url).host);
  return url.replace(new URL(url).host, proxy.address);
}
const cluster = (): StartedRestateCluster => {
  assert.ok(started, 'the cluster started');
  return started;
};
const unique = (): string => randomBytes(4).toString('hex');

before(async () => {
  started = await startRestateCluster({
    runDir,
    partitions: PARTITIONS,
    readyTimeoutMs: 240_000,
    advertise: (_node, realFabricAddress) => proxyTo(realFabricAddress),
    serviceUri: (realServiceUrl) => proxyTo(realServiceUrl),
  });
});

after(async () => {
  await started?.stop();
  await Promise.all(proxies.map((p) => p.stop()));
  rmSync(runDir, { recursive: true, force: true });
});

function rssMiB(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(m?.[1]) / 1024);
}

test('Echo and Counter answer through every ingress', async (t) => {
  const c = cluster();
  t.diagnostic(`start-up ${c.startupMs} ms; RSS MiB ${c.nodes.map((n) => rssMiB(n.pid())).join(', ')}`);
  for (const url of c.ingressUrls) {
    const r = await post(`${url}/Echo/echo`, { hello: url });
    assert.deepEqual([r.status, r.json], [200, { hello: url }], r.text);
  }
  const key = `k-${unique()}`;
  const values: unknown[] = [];
  for (const url of c.ingressUrls) {
    const r = await post(`${url}/Counter/${key}/add`, { delta: 2 });
    assert.equal(r.status, 200, r.text);
    values.push(r.json);
  }
  assert.deepEqual(values, [2, 4, 6]);
  for (const url of c.ingressUrls) {
    const r = await post(`${url}/Counter/${key}/get`, null);
    assert.deepEqual([r.status, r.json], [200, 6], r.text);
  }
  const bad = await post(`${c.ingressUrls[0]}/Sleep/sleep`, { ms: 'soon' });
  assert.equal(bad.status, 500, 'a terminal handler error is an error answer, not a hang');
});

test('/send, then attach through the other ingresses; a resend with the same idempotency key is deduplicated', async () => {
  const c = cluster();
  const [a, b, d] = c.ingressUrls as [string, string, string];
  const idempotencyKey = `send-${unique()}`;
  const sent = await post(
    `${a}/Flaky/call/send`,
    { failFirst: 2 },
    { headers: { 'idempotency-key': idempotencyKey } },
  );
  assert.equal(sent.status, 202, sent.text);
  const { invocationId, status } = sent.json as { invocationId: string; status: string };
  assert.equal(status, 'Accepted');
  assert.match(invocationId, /^inv_/);
  for (const url of [b, d]) {
    const attached = await get(`${url}/restate/invocation/${invocationId}/attach`, {
      timeoutMs: CALL_BOUND_MS,
    });
    assert.deepEqual([attached.status, attached.json], [200, { attempts: 3 }], attached.text);
  }
  const again = await post(
    `${b}/Flaky/call/send`,
    { failFirst: 2 },
    { headers: { 'idempotency-key': idempotencyKey } },
  );
  assert.equal(again.status, 202, again.text);
  assert.deepEqual(again.json, { invocationId, status: 'PreviouslyAccepted' });
});

test('nodes advertise their proxies and the endpoint is registered through its proxy', async () => {
  const c = cluster();
  for (const [i, n] of c.nodes.entries()) {
    assert.equal(n.advertisedAddress, `http://${proxies[i]!.address}/`);
    assert.notEqual(n.advertisedAddress, n.fabricAddress);
  }
  const listed = await runRestatectl(['nodes', 'list', '-S', c.nodes[0]!.fabricAddress]);
  for (const n of c.nodes) assert.ok(listed.stdout.includes(n.advertisedAddress), listed.stdout);
  assert.equal(c.services.registeredUri, `http://${proxies[3]!.address}`);
  const deployments = await get(`${c.adminUrls[0]}/deployments`);
  assert.ok(deployments.text.includes(c.services.registeredUri), deployments.text);
});

test('every partition has exactly one leader, and each node reports the same leaders', async () => {
  const c = cluster();
  const describe = (v: Map<number, { nodeId: number }>): string =>
    [...v.entries()].map(([p, l]) => `${p}:${l.nodeId}`).join(' ');
  // Each node learns the partition table on its own: right after start (or a leader moving)
  // one may still show the previous leader of a partition. Read until they agree (bounded),
  // then judge the last reading.
  const read = async (): Promise<[Map<number, { nodeId: number }>[], Map<number, { nodeId: number }>]> => [
    await Promise.all(c.nodes.map((n) => listPartitions(n.fabricAddress))),
    await c.partitionLeaders(),
  ];
  let [views, leaders] = await read();
  const agreed = (): boolean =>
    views.every((v) => v.size === PARTITIONS && describe(v) === describe(views[0]!)) &&
    describe(leaders) === describe(views[0]!);
  for (const deadline = Date.now() + 15_000; !agreed() && Date.now() < deadline;) {
    await sleep(250);
    [views, leaders] = await read();
  }
  for (const view of views) {
    assert.equal(view.size, PARTITIONS);
    for (const l of view.values()) assert.ok(l.nodeId >= 1 && l.nodeId <= 3, JSON.stringify(l));
  }
  assert.equal(describe(views[1]!), describe(views[0]!));
  assert.equal(describe(views[2]!), describe(views[0]!));
  assert.equal(describe(leaders), describe(views[0]!));
});

test('metrics on every real fabric port: partitions, leaders, ingress requests', async () => {
  const c = cluster();
  // The nodes are scraped one after another and each updates its leader gauge on its own:
  // while a partition's leadership settles, the old leader may still count it when the new
  // one already does. Scrape until the three gauges add up (bounded), then judge the last
  // scrape.
  const scrapeAll = async (): Promise<number> => {
    let leaders = 0;
    for (const url of c.metricsUrls) {
      const samples = await scrape(url);
      assert.equal(sumSamples(samples, 'restate_num_partitions'), PARTITIONS);
      assert.equal(sumSamples(samples, 'restate_failure_detector_nodes_total', { state: 'alive' }), 3);
      assert.ok(sumSamples(samples, 'restate_ingress_requests_total', { status: 'completed' }) > 0);
      leaders += sumSamples(samples, 'restate_num_active_partition_leaders');
    }
    return leaders;
  };
  let leaders = await scrapeAll();
  for (const deadline = Date.now() + 15_000; leaders !== PARTITIONS && Date.now() < deadline;) {
    await sleep(250);
    leaders = await scrapeAll();
  }
  assert.equal(leaders, PARTITIONS, 'the leader gauges of the three nodes add up to the partition count');
});

test('every Restate metric named in the signal mapping exists on the nodes', async () => {
  const names = new Set<string>();
  for (const url of cluster().metricsUrls) for (const s of await scrape(url)) names.add(s.name);
  const mapped = Object.values(restateSignals).flatMap((m) => (m.kind === 'metric' ? [m.restate] : []));
  assert.ok(mapped.length >= 4);
  const absent = [...mapped, ...Object.keys(restateExtraSignals)].filter(
    (name) => !names.has(name) && !names.has(`${name}_count`),
  );
  assert.deepEqual(absent, []);
});

test('kill -9 of the node leading most partitions: calls through the other ingresses keep being answered', async (t) => {
  const c = cluster();
  const leaders = await c.partitionLeaders();
  const ledBy = (nodeId: number): number[] =>
    [...leaders.values()].filter((l) => l.nodeId === nodeId).map((l) => l.partition);
  const victim = [...c.nodes].sort((x, y) => ledBy(y.index).length - ledBy(x.index).length)[0]!;
  const victimPartitions = ledBy(victim.index);
  const survivors = c.nodes.filter((n) => n !== victim);
  assert.ok(victimPartitions.length > 0);

  const clientRequestsTo = async (): Promise<number> => {
    let total = 0;
    for (const n of survivors) {
      const samples = await scrape(n.metricsUrl);
      for (const p of victimPartitions)
        total += sumSamples(samples, 'restate_invocation_client_requests_total', { partition_id: String(p) });
    }
    return total;
  };
  const before = await clientRequestsTo();

  // Calls in flight at the kill, then rounds of Echo and Counter calls for 8 s after it.
  const keys = Array.from({ length: 12 }, (_, i) => `kill-${unique()}-${i}`);
  const adds = new Map<string, number>(keys.map((k) => [k, 0]));
  const calls: Promise<HttpResult & { what: string }>[] = [];
  const call = (url: string, path: string, body: unknown): void => {
    calls.push(post(`${url}${path}`, body, { timeoutMs: CALL_BOUND_MS }).then((r) => ({ ...r, what: path })));
  };
  for (let i = 0; i < 6; i++) call(survivors[i % 2]!.ingressUrl, '/Sleep/sleep', { ms: 1000 });
  await sleep(200);
  victim.kill('SIGKILL');
  const killedAt = Date.now();
  // Should an assertion below fail, the node still comes back, so the tests after this one
  // judge a whole cluster rather than fail for this one's dead node.
  t.after(async () => {
    if (victim.isRunning()) return;
    await victim.restart();
    await c.waitUntilServing(90_000);
  });
  let failoverMs = -1;
  const failover = (async (): Promise<Map<number, { nodeId: number }>> => {
    let view = new Map<number, { nodeId: number }>();
    while (Date.now() - killedAt < 60_000) {
      view = await listPartitions(survivors[0]!.fabricAddress).catch(
        () => new Map<number, { nodeId: number }>(),
      );
      if (view.size === PARTITIONS && [...view.values()].every((l) => l.nodeId !== victim.index)) {
        failoverMs = Date.now() - killedAt;
        break;
      }
      await sleep(250);
    }
    return view;
  })();
  for (let round = 0; Date.now() - killedAt < 8000; round++) {
    for (const [i, key] of keys.entries()) {
      const url = survivors[(i + round) % 2]!.ingressUrl;
      call(url, '/Echo/echo', { round, i });
      call(url, `/Counter/${key}/add`, { delta: 1 });
      adds.set(key, adds.get(key)! + 1);
    }
    await sleep(500);
  }
  const results = await Promise.all(calls);
  const failed = results.filter((r) => r.status !== 200);
  const slowest = Math.max(...results.map((r) => r.ms));
  t.diagnostic(
    `victim n${victim.index} led partitions ${victimPartitions.join(',')}; ${results.length} calls, slowest ${slowest} ms`,
  );
  assert.deepEqual(
    failed.map((r) => `${r.what} ${r.status} ${r.text}`),
    [],
    'every call through a surviving ingress was answered',
  );
  assert.ok((await clientRequestsTo()) > before, 'some calls went to partitions the victim had led');

  // Exactly once: each counter holds exactly the number of acknowledged adds.
  for (const key of keys) {
    const r = await post(`${survivors[0]!.ingressUrl}/Counter/${key}/get`, null);
    assert.deepEqual([r.status, r.json], [200, adds.get(key)], key);
  }

  // Leadership moved: every partition has a leader on a surviving node (polled from the kill on).
  const view = await failover;
  assert.equal(view.size, PARTITIONS, 'every partition has a leader again');
  assert.ok(
    [...view.values()].every((l) => l.nodeId !== victim.index),
    'no partition is led by the dead node',
  );
  t.diagnostic(`every partition led by a survivor ${failoverMs} ms after the kill`);

  // The node comes back with its data and serves again.
  const restartAt = Date.now();
  await victim.restart();
  assert.ok(victim.isRunning());
  await c.waitUntilServing(90_000);
  t.diagnostic(`restarted node: serving through every ingress ${Date.now() - restartAt} ms after restart()`);
  assert.equal(victim.lastStop(), undefined, 'a killed node had no graceful stop to measure');
});

test('a graceful restart of a running node records how its stop went (gracefulStops reads it)', async () => {
  const c = cluster();
  const node = c.nodes[1]!;
  await node.restart();
  const stop = node.lastStop();
  assert.ok(stop, 'the stop was measured');
  assert.equal(
    stop.graceful,
    true,
    `exited on SIGTERM within ${stop.graceMs} ms (took ${Math.round(stop.ms)} ms)`,
  );
  assert.ok(stop.ms < stop.graceMs);
  await c.waitUntilServing(90_000);
});

test('pause stops a node (SIGSTOP), resume lets it run again and the cluster serves through every ingress', async () => {
  const c = cluster();
  const node = c.nodes[0]!;
  const state = (): string => {
    const stat = readFileSync(`/proc/${node.pid()}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  };
  const ledElsewhere = [...(await c.partitionLeaders()).values()]
    .filter((l) => l.nodeId !== node.index)
    .map((l) => l.partition);
  node.pause();
  await sleep(200);
  assert.equal(state(), 'T', 'stopped');
  const stalled = await post(`${node.ingressUrl}/Echo/echo`, 1, { timeoutMs: 1500 });
  assert.equal(stalled.status, 0, 'a paused node does not answer');
  // Read through a node that is not paused: restatectl through the paused one would hang until
  // its 10 s timeout. Restate's table drops the paused node's leaders once its failure detector
  // notices (a few seconds), so only the partitions other nodes led are sure
  // to be listed.
  const readAt = Date.now();
  const leaders = await c.partitionLeaders();
  const readMs = Date.now() - readAt;
  assert.ok(readMs < 8000, `leaders read in ${readMs} ms, not through the paused node`);
  assert.deepEqual(
    ledElsewhere.filter((p) => !leaders.has(p)),
    [],
    'partitions led by nodes that are not paused are still listed with a leader',
  );
  node.resume();
  await sleep(200);
  assert.notEqual(state(), 'T');
  await c.waitUntilServing(90_000);
});

test('stop ends every process and removes the data dir; logs stay in the run dir', async () => {
  const c = cluster();
  const pids = [...c.nodes.map((n) => n.pid()), c.services.pid].filter((p): p is number => p !== undefined);
  assert.equal(pids.length, 4);
  await c.stop();
  assert.deepEqual(
    pids.filter((p) => pidAlive(p)),
    [],
  );
  assert.equal(existsSync(c.dataDir), false);
  for (const n of c.nodes) assert.ok(existsSync(n.logFile), n.logFile);
  await c.stop(); // idempotent
});
