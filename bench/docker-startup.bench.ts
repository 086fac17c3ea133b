// Topology start-up time, docker versus local, in the same run: the whole reference target
// (Toxiproxy, the log, 3 processors, the ingress, a proxy per link) started through the
// runtime path `limbo run --runtime local|docker` uses, until every partition has a leader
// and a call through the client->ingress proxy is answered — alternating rounds so machine
// noise hits both. Beside it, the floor of each runtime: one bare `node -e` start printing a
// ready line. Skips when no Docker engine or services image is reachable.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startProcess } from '../src/runtime/process.js';
import { removeRunContainers, startContainer } from '../src/runtime/docker.js';
import type { RuntimeName } from '../src/runtime/service-runtime.js';
import { createTarget } from '../src/targets/registry.js';
import { dockerTestEnv } from '../test/helpers/docker.js';
import { fmt } from './load.js';

const ROUNDS = Number(process.env.LIMBO_BENCH_ROUNDS ?? 3);
const BASE_IMAGE = process.env.LIMBO_BASE_IMAGE ?? 'limbo/node-base:local';
const HELLO = `console.log('limbo-ready '+JSON.stringify({role:'x',node:'x',pid:process.pid,addresses:{}}))`;

interface Stoppable {
  stop(graceMs?: number): Promise<void>;
}

async function timed(fn: () => Promise<Stoppable[]>): Promise<number> {
  const start = performance.now();
  const started = await fn();
  const ms = performance.now() - start;
  await Promise.all(started.map((s) => s.stop(1000)));
  return ms;
}

const TOPOLOGY = { processors: 3, partitions: 4 };

/** The reference target on a runtime: start() resolves once leaders exist and a call is answered. */
async function topology(runtime: RuntimeName, runDir: string): Promise<Stoppable[]> {
  const target = await createTarget('reference', runtime).start(TOPOLOGY, { runDir });
  return [{ stop: () => target.stop() }];
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
      local.push(await timed(() => topology('local', join(runDir, `local-${i}`))));
      docker.push(await timed(() => topology('docker', join(runDir, `docker-${i}`))));
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
    rmSync(runDir, { recursive: true, force: true });
  }
  const [l, d, bl, bd] = [median(local), median(docker), median(bareLocal), median(bareDocker)];
  console.log(
    `${ROUNDS} rounds, medians; topology = reference target (${TOPOLOGY.processors} processors, ${TOPOLOGY.partitions} partitions, proxies; image ${image}) until leaders + first call`,
  );
  console.log(`topology local : ${fmt(l, 0)} ms   docker: ${fmt(d, 0)} ms   docker/local ${fmt(d / l, 2)}x`);
  console.log(
    `bare node start local: ${fmt(bl, 0)} ms   docker: ${fmt(bd, 0)} ms   docker/local ${fmt(bd / bl, 2)}x`,
  );
}
