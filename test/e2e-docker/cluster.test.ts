// The reference cluster as containers (log, processor, ingress; host networking, port 0):
// a call through the ingress, kill -9 of a container, restart, pause/resume, and no
// container left once the run is cleaned up. Skips when no engine or image is there.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  LABEL_RUN,
  listContainersByLabel,
  removeRunContainers,
  startContainerService,
  type StartedContainer,
} from '../../src/runtime/docker.js';
import { dockerClient } from '../../src/runtime/docker-engine.js';
import { call } from '../helpers/cluster.js';
import { dockerTestEnv } from '../helpers/docker.js';

const { skip } = await dockerTestEnv();
const runId = `t${randomBytes(4).toString('hex')}`;
const runDir = mkdtempSync(join(tmpdir(), 'limbo-docker-'));

after(async () => {
  if (!skip) await removeRunContainers(runId);
  rmSync(runDir, { recursive: true, force: true });
});

async function echo(url: string, body: unknown, timeoutMs = 20_000): Promise<unknown> {
  const res = await call(url, '/Echo/echo', body, { timeoutMs });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

test('a cluster in containers: call, kill -9, restart, pause, cleanup', { skip }, async () => {
  const started: StartedContainer[] = [];
  try {
    const log = await startContainerService({
      name: 'log',
      role: 'log',
      args: ['--port', '0', '--data-dir', '/tmp/limbo-log', '--partitions', '2'],
      runDir,
      runId,
    });
    started.push(log);
    const logAddress = log.ready.addresses.grpc!;
    assert.match(logAddress, /^127\.0\.0\.1:\d+$/);
    const [processor, ingress] = await Promise.all([
      startContainerService({
        name: 'processor-1',
        role: 'processor',
        args: ['--node', 'processor-1', '--log-address', logAddress],
        runDir,
        runId,
      }),
      startContainerService({
        name: 'ingress-1',
        role: 'ingress',
        args: ['--log-address', logAddress],
        env: { LIMBO_LOG_LEVEL: 'info' },
        runDir,
        runId,
      }),
    ]);
    started.push(processor, ingress);
    assert.equal(processor.ready.role, 'processor');
    assert.equal(ingress.ready.role, 'ingress');
    const url = ingress.ready.addresses.http!;
    assert.deepEqual(await echo(url, { hello: 'docker' }), { hello: 'docker' });

    // The service's output is in <runDir>/logs/<name>.log, ready line included.
    assert.match(readFileSync(join(runDir, 'logs', 'ingress-1.log'), 'utf8'), /^limbo-ready /m);

    // kill -9: the container exits (137 = killed by SIGKILL) and stays there, stopped.
    await processor.kill('SIGKILL');
    assert.equal(await processor.exited, 137);
    assert.equal(processor.isRunning(), false);
    const client = await dockerClient();
    const state = await client.container.dockerode.getContainer(processor.id).inspect();
    assert.equal(state.State.Running, false);
    assert.equal(state.Config.User, 'node', 'the services image runs as its non-root user');

    // Restart: the same container again; the cluster answers once it leads again.
    const again = await processor.restart();
    assert.equal(again.node, 'processor-1');
    assert.equal(processor.isRunning(), true);
    assert.deepEqual(await echo(url, { after: 'restart' }), { after: 'restart' });

    // Pause freezes the ingress: a call cannot be answered until it is resumed.
    await ingress.pause();
    await assert.rejects(call(url, '/Echo/echo', { n: 1 }, { timeoutMs: 1000 }), /timeout|abort/i);
    await ingress.resume();
    assert.deepEqual(await echo(url, { n: 2 }), { n: 2 });
  } finally {
    await Promise.all(started.map((c) => c.stop(1000)));
  }
  // stop() removed each container it started.
  assert.deepEqual(await listContainersByLabel(await dockerClient(), { [LABEL_RUN]: runId }), []);
});

test('removeRunContainers removes every container of the run, running or exited', { skip }, async () => {
  const cleanupRun = `${runId}-cleanup`;
  const a = await startContainerService({
    name: 'log-a',
    role: 'log',
    args: ['--data-dir', '/tmp/a'],
    runDir,
    runId: cleanupRun,
  });
  const b = await startContainerService({
    name: 'log-b',
    role: 'log',
    args: ['--data-dir', '/tmp/b'],
    runDir,
    runId: cleanupRun,
  });
  await b.kill('SIGKILL');
  await b.exited;
  const client = await dockerClient();
  assert.equal((await listContainersByLabel(client, { [LABEL_RUN]: cleanupRun })).length, 2);
  assert.equal(await removeRunContainers(cleanupRun), 2);
  assert.deepEqual(await listContainersByLabel(client, { [LABEL_RUN]: cleanupRun }), []);
  // The running one was killed by the forced removal: its exit is seen.
  assert.ok([137, 'removed'].includes(await a.exited));
  assert.equal(a.isRunning(), false);
});

test(
  'a service that exits before it is ready fails the start, with its output, and leaves nothing',
  { skip },
  async () => {
    const failRun = `${runId}-fail`;
    await assert.rejects(
      startContainerService({ name: 'bad', role: 'log', args: ['--port', 'nope'], runDir, runId: failRun }),
      (err: Error & { code?: string }) => err.code === 'E_CONTAINER_START' && /--port/.test(err.message),
    );
    assert.deepEqual(await listContainersByLabel(await dockerClient(), { [LABEL_RUN]: failRun }), []);
  },
);
