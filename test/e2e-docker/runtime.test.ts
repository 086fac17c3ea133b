// The reference target on the docker runtime, through the same handles faults use: every
// service a container (no host PID), a counter's acknowledged value surviving kill -9 and
// restart of its leader's container, pause freezing the ingress,
// spans from the containers reaching an OTLP receiver on 127.0.0.1 (host networking), and
// no container left after stop. Skips when no engine or image is there.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTarget } from '../../src/targets/registry.js';
import { startOtlpReceiver } from '../../src/observe/otlp-receiver.js';
import { LABEL_OWNER, listContainersByLabel } from '../../src/runtime/docker.js';
import { dockerClient } from '../../src/runtime/docker-engine.js';
import { ensureReaper } from '../../src/runtime/docker-reaper.js';
import { call } from '../helpers/cluster.js';
import { keysOnPartition } from '../helpers/keys.js';
import { dockerTestEnv } from '../helpers/docker.js';

const { skip } = await dockerTestEnv();
const runDir = mkdtempSync(join(tmpdir(), 'limbo-docker-rt-'));
after(() => rmSync(runDir, { recursive: true, force: true }));

async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test(
  'reference on --runtime docker: kill -9, restart with the same data, pause, spans, cleanup',
  { skip },
  async () => {
    const receiver = await startOtlpReceiver();
    const env = { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, PATH: '/host/only' };
    const target = await createTarget('reference', 'docker').start(
      { processors: 2, partitions: 2 },
      { runDir, env },
    );
    const owner = { [LABEL_OWNER]: ensureReaper().owner };
    try {
      assert.equal(target.runtime, 'docker');
      assert.match(target.toxiproxyDescription ?? '', /container/);
      const containers = await listContainersByLabel(await dockerClient(), owner);
      assert.equal(containers.length, 5, 'log, 2 processors, ingress and the proxy are containers');
      for (const s of target.services.values()) {
        assert.equal(s.pid(), undefined, `${s.name} has no host PID`);
        const m = await fetch(s.metricsUrl()!);
        assert.equal(m.status, 200, s.name);
        await m.arrayBuffer();
      }
      const url = target.ingressUrls[0]!;
      const key = keysOnPartition('Counter', 0, 2, 1, `d${Date.now()}-`)[0]!;
      assert.equal((await call(url, `/Counter/${key}/add`, { delta: 5 })).body, 5);

      // kill -9 of the partition's leader container, then restart (the same container): the
      // cluster serves the counter again, its acknowledged value intact.
      const leader = (await target.leaderOf(0))!;
      const processor = target.services.get(leader)!;
      await processor.kill();
      assert.equal(processor.isRunning(), false);
      await processor.restart();
      assert.equal(processor.isRunning(), true);
      const added = await call(url, `/Counter/${key}/add`, { delta: 1 }, { timeoutMs: 30_000 });
      assert.equal(added.body, 6, JSON.stringify(added));
      const output = readFileSync(join(runDir, 'logs', `${leader}.log`), 'utf8');
      assert.equal(output.match(/^limbo-ready /gm)?.length, 2, 'two incarnations in one log file');

      // pause freezes the ingress container until resumed.
      const ingress = target.services.get('ingress-1')!;
      await ingress.pause();
      await assert.rejects(call(url, '/Echo/echo', { n: 1 }, { timeoutMs: 1000 }), /timeout|abort/i);
      await ingress.resume();
      assert.equal((await call(url, '/Echo/echo', { n: 2 }, { timeoutMs: 20_000 })).status, 200);

      // Spans exported from inside the containers arrive at the receiver on 127.0.0.1.
      await until(
        'spans from the ingress and a processor',
        () => {
          const services = new Set(receiver.spans.map((s) => s.service));
          return services.has('ingress-1') && [...services].some((s) => s.startsWith('processor-'));
        },
        20_000,
      );
    } finally {
      await target.stop();
      await receiver.stop();
    }
    assert.deepEqual(await listContainersByLabel(await dockerClient(), owner), [], 'no container left');
  },
);
