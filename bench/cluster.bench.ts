// Calls/s and latency through the ingress (3 processors, 4 partitions) beside a bare Node
// HTTP echo server on the same machine in the same run (the ceiling for an HTTP front
// here), as a ratio; beside both, the no-work floor (pipeline-floor.ts: the cluster's
// messages between five processes and nothing else), the ceiling for any Node implementation
// of this path here; and the RSS of the whole cluster at rest and under load.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TestCluster } from '../test/helpers/cluster.js';
import { availableParallelism } from 'node:os';
import { closedLoop, cpuMsOf, fmt, groupMemoryMiB, ownCpuMs, warmUp, type WarmUp } from './load.js';
import { startPipelineFloor } from './pipeline-floor.js';
import { recordGoal } from './summary.js';

const DURATION_MS = Number(process.env.LIMBO_BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = 16;

function post(url: string, body: string): Promise<boolean> {
  return fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } }).then(
    async (r) => {
      await r.arrayBuffer();
      return r.status === 200;
    },
  );
}

export async function run(): Promise<void> {
  const echo = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  const echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/`;
  // Each system runs the same load unmeasured until its rate settles (load.ts warmUp), so the
  // figures compare the services, not how far the JIT has got with them.
  const bareWarm = await warmUp(() => post(echoUrl, '{"x":1}'), CONCURRENCY);
  const bareCpuBefore = ownCpuMs();
  const bare = await closedLoop(() => post(echoUrl, '{"x":1}'), CONCURRENCY, DURATION_MS);
  // The bare echo serves in this process: its CPU is the load generator's and the server's.
  const bareCpuPerCall = (ownCpuMs() - bareCpuBefore) / bare.requests;
  await new Promise<void>((r) => echo.close(() => r()));

  // The floor: five processes with the cluster's messages per call (raw TCP, O_DSYNC group
  // commit) and no other work. No implementation of this path in Node on this machine does
  // more calls/s or a lower p99, so it is the ceiling the cluster's ratios are read against.
  let floor: Awaited<ReturnType<typeof closedLoop>>;
  let floorCpuPerCall: number[];
  let floorClientCpuPerCall: number;
  let floorWarm: WarmUp;
  {
    await using pipeline = await startPipelineFloor(3, 4);
    floorWarm = await warmUp(() => post(`${pipeline.url}/Echo/echo`, '{"x":1}'), CONCURRENCY);
    const before = pipeline.pids.map(cpuMsOf);
    const clientBefore = ownCpuMs();
    floor = await closedLoop(() => post(`${pipeline.url}/Echo/echo`, '{"x":1}'), CONCURRENCY, DURATION_MS);
    floorClientCpuPerCall = (ownCpuMs() - clientBefore) / floor.requests;
    floorCpuPerCall = pipeline.pids.map((pid, i) => (cpuMsOf(pid) - before[i]!) / floor.requests);
  }

  await using cluster = await TestCluster.start({ processors: 3, partitions: 4 });
  await cluster.waitForLeaders();
  const pids = [cluster.log, cluster.ingress, ...cluster.processors].map((p) => p!.pid);
  const rest = groupMemoryMiB(pids);
  const atRest = rest.rssSum;
  const residentAtRest = rest.resident;
  let peak = atRest;
  let residentPeak = residentAtRest;
  const sampler = setInterval(() => {
    const now = groupMemoryMiB(pids);
    peak = Math.max(peak, now.rssSum);
    residentPeak = Math.max(residentPeak, now.resident);
  }, 200);
  const clusterWarm = await warmUp(() => post(`${cluster.url}/Echo/echo`, '{"x":1}'), CONCURRENCY);
  const names = ['log', 'ingress', ...cluster.processors.map((_, i) => `processor-${i + 1}`)];
  const cpuBefore = pids.map(cpuMsOf);
  const clientCpuBefore = ownCpuMs();
  const limbo = await closedLoop(() => post(`${cluster.url}/Echo/echo`, '{"x":1}'), CONCURRENCY, DURATION_MS);
  const clientCpuPerCall = (ownCpuMs() - clientCpuBefore) / limbo.requests;
  const cpuPerCall = pids.map((pid, i) => (cpuMsOf(pid) - cpuBefore[i]!) / limbo.requests);
  clearInterval(sampler);

  recordGoal('clusterP99', limbo.p99Ms / bare.p99Ms, `the no-work floor ${fmt(floor.p99Ms / bare.p99Ms, 1)}`);
  console.log(`concurrency ${CONCURRENCY}, ${DURATION_MS} ms each, after a warm-up until the rate settles`);
  const warmLine = (name: string, w: WarmUp): string =>
    `${name} ${fmt(w.ms / 1000, 1)} s${w.settled ? '' : ' (not settled)'}, first second ${fmt(w.coldPerSecond, 0)}/s`;
  console.log(
    `warm-up: ${warmLine('bare', bareWarm)}; ${warmLine('floor', floorWarm)}; ${warmLine('cluster', clusterWarm)}`,
  );
  console.log(
    `bare node echo : ${fmt(bare.perSecond, 0)} req/s  p50 ${fmt(bare.p50Ms, 2)} ms  p99 ${fmt(bare.p99Ms, 2)} ms`,
  );
  console.log(
    `no-work floor  : ${fmt(floor.perSecond, 0)} calls/s p50 ${fmt(floor.p50Ms, 2)} ms  p99 ${fmt(floor.p99Ms, 2)} ms  errors ${floor.errors}`,
  );
  console.log(
    `limbo Echo/echo: ${fmt(limbo.perSecond, 0)} calls/s p50 ${fmt(limbo.p50Ms, 2)} ms  p99 ${fmt(limbo.p99Ms, 2)} ms  errors ${limbo.errors}`,
  );
  console.log(
    `ratio calls/s limbo ÷ bare: ${fmt(limbo.perSecond / bare.perSecond, 3)} (no-work floor ÷ bare ${fmt(floor.perSecond / bare.perSecond, 3)}; limbo ÷ floor ${fmt(limbo.perSecond / floor.perSecond, 3)})`,
  );
  console.log(
    `ratio p99 limbo ÷ bare: ${fmt(limbo.p99Ms / bare.p99Ms, 1)} (no-work floor ÷ bare ${fmt(floor.p99Ms / bare.p99Ms, 1)})`,
  );
  // Where a call's CPU goes, and the calls/s that CPU allows on this machine's cores: on a
  // machine the load generator and the services share, that is the bound on the ratio above.
  const servicesCpu = cpuPerCall.reduce((a, b) => a + b, 0);
  const cores = availableParallelism();
  const cpuAllows = (cores * 1000) / (servicesCpu + clientCpuPerCall);
  // Beside the goal: the ratio the cores allow at this run's CPU per call (the cluster and its
  // load generator alone on the machine).
  recordGoal(
    'clusterThroughput',
    limbo.perSecond / bare.perSecond,
    `the no-work floor ${fmt(floor.perSecond / bare.perSecond, 2)}; the CPU per call allows ${fmt(cpuAllows / bare.perSecond, 2)}`,
  );
  console.log(
    `CPU ms per call: bare echo (load generator + server) ${fmt(bareCpuPerCall, 3)}; cluster: load generator ${fmt(clientCpuPerCall, 3)}, ${names.map((n, i) => `${n} ${fmt(cpuPerCall[i]!, 3)}`).join(', ')}; services ${fmt(servicesCpu, 3)}`,
  );
  console.log(
    `CPU ms per call, no-work floor: load generator ${fmt(floorClientCpuPerCall, 3)}, ${names.map((n, i) => `${n} ${fmt(floorCpuPerCall[i]!, 3)}`).join(', ')}; services ${fmt(
      floorCpuPerCall.reduce((a, b) => a + b, 0),
      3,
    )}`,
  );
  console.log(
    `calls/s the CPU allows on ${cores} cores: bare ${fmt((cores * 1000) / bareCpuPerCall, 0)}, cluster ${fmt(cpuAllows, 0)}`,
  );
  console.log(
    `cluster memory (5 processes), private + shared once: at rest ${fmt(residentAtRest, 0)} MiB, peak under load ${fmt(residentPeak, 0)} MiB; Σ RSS: at rest ${fmt(atRest, 0)} MiB, peak ${fmt(peak, 0)} MiB`,
  );
}
