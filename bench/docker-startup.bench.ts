// Topology start-up time, docker versus local, in the same run: the log server, one
// processor and one ingress started (log first, then the other two at once) until a call
// through the ingress is answered — as child processes (the local runtime) and as
// containers (the docker runtime, host networking) — alternating rounds so machine noise
// hits both. Beside it, the floor of each runtime: one bare `node -e` start printing a
// ready line. Skips when no Docker engine or services image is reachable.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startLimboService, startProcess } from '../src/runtime/process.js';
import { removeRunContainers, startContainer, startContainerService } from '../src/runtime/docker.js';
import { call } from '../test/helpers/cluster.js';
import { dockerTestEnv } from '../test/helpers/docker.js';
import { fmt } from './load.js';

const ROUNDS = Number(process.env.LIMBO_BENCH_ROUNDS ?? 3);
const BASE_IMAGE = process.env.LIMBO_BASE_IMAGE ?? 'limbo/node-base:local';
const HELLO = `console.log('limbo-ready '+JSON.stringify({role:'x',node:'x',pid:process.pid,addresses:{}}))`;

interface Stoppable {
  stop(graceMs?: number): Promise<void>;
}

async function firstEcho(url: string): Promise<void> {
  const res = await call(url, '/Echo/echo', { up: true }, { timeoutMs: 30_000 });
  if (res.status !== 200) throw new Error(`echo answered ${res.status}`);
}

async function timed(fn: () => Promise<Stoppable[]>): Promise<number> {
  const start = performance.now();
  const started = await fn();
  const ms = performance.now() - start;
  await Promise.all(started.map((s) => s.stop(1000)));
  return ms;
}

function localTopology(dataDir: string): Promise<Stoppable[]> {
  return (async () => {
    const log = await startLimboService('log', ['--data-dir', dataDir], { name: 'log' });
    const addr = log.ready.addresses.grpc!;
    const [processor, ingress] = await Promise.all([
      startLimboService('processor', ['--node', 'processor-1', '--log-address', addr], {
        name: 'processor-1',
      }),
      startLimboService('ingress', ['--log-address', addr], { name: 'ingress-1' }),
    ]);
    await firstEcho(ingress.ready.addresses.http!);
    return [ingress, processor, log];
  })();
}

function dockerTopology(runDir: string, runId: string, image: string): Promise<Stoppable[]> {
  return (async () => {
    const common = { runDir, runId, image };
    const log = await startContainerService({
      ...common,
      name: 'log',
      role: 'log',
      args: ['--data-dir', '/tmp/log'],
    });
    const addr = log.ready.addresses.grpc!;
    const [processor, ingress] = await Promise.all([
      startContainerService({
        ...common,
        name: 'processor-1',
        role: 'processor',
        args: ['--node', 'processor-1', '--log-address', addr],
      }),
      startContainerService({ ...common, name: 'ingress-1', role: 'ingress', args: ['--log-address', addr] }),
    ]);
    await firstEcho(ingress.ready.addresses.http!);
    return [ingress, processor, log];
  })();
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(): Promise<void> {
  const { skip, image } = await dockerTestEnv();
  if (skip) {
    console.log(`skipped: ${skip}`);
    return;
  }
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-bench-docker-'));
  const runId = `bench-${randomBytes(3).toString('hex')}`;
  const local: number[] = [];
  const docker: number[] = [];
  const bareLocal: number[] = [];
  const bareDocker: number[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const dataDir = join(runDir, `data-${i}`);
      local.push(await timed(() => localTopology(dataDir)));
      docker.push(await timed(() => dockerTopology(runDir, `${runId}-${i}`, image)));
      bareLocal.push(
        await timed(async () => [
          await startProcess({
            name: 'hello',
            command: process.execPath,
            args: ['-e', `${HELLO};setInterval(()=>{},1e9)`],
          }),
        ]),
      );
      bareDocker.push(
        await timed(async () => [
          await startContainer({
            name: `hello-${i}`,
            image: BASE_IMAGE,
            command: ['node', '-e', `${HELLO};setInterval(()=>{},1e9)`],
            runDir,
            runId,
          }),
        ]),
      );
    }
  } finally {
    await removeRunContainers(runId).catch(() => 0);
    for (let i = 0; i < ROUNDS; i++) await removeRunContainers(`${runId}-${i}`).catch(() => 0);
    rmSync(runDir, { recursive: true, force: true });
  }
  const [l, d, bl, bd] = [median(local), median(docker), median(bareLocal), median(bareDocker)];
  console.log(`${ROUNDS} rounds, medians; topology = log, then processor + ingress, until the first echo`);
  console.log(`topology local : ${fmt(l, 0)} ms   docker: ${fmt(d, 0)} ms   docker/local ${fmt(d / l, 2)}x`);
  console.log(
    `bare node start local: ${fmt(bl, 0)} ms   docker: ${fmt(bd, 0)} ms   docker/local ${fmt(bd / bl, 2)}x`,
  );
}
