// The declared etcd target (targets/etcd.limbo.ts) on --runtime docker: each member a
// container of its declared image (limbo/etcd:local, scripts/docker/etcd-image.sh) on the host
// network, its data directory bind-mounted, the peer link into the leader cut
// (chaos/peers/leader-inbound-cut.ts) and the verdict checked; no container is left after.
// Skips when no engine or image is there (fails instead with LIMBO_DOCKER_REQUIRED=1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  dockerAvailable,
  imageExists,
  LABEL_OWNER,
  listContainersByLabel,
} from '../../src/runtime/docker.js';
import { dockerClient } from '../../src/runtime/docker-engine.js';
import { ensureReaper } from '../../src/runtime/docker-reaper.js';
import { loadSuite } from '../../src/runner/load-suites.js';
import { runSuite } from '../../src/runner/run-suite.js';
import { resolveTarget } from '../../src/targets/registry.js';
import type { StartedTarget, Target } from '../../src/targets/target.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const image = process.env['LIMBO_ETCD_IMAGE'] ?? 'limbo/etcd:local';

async function skipReason(): Promise<string | false> {
  const engine = await dockerAvailable(5000);
  let skip: string | false = false;
  if (!engine.ok) skip = engine.reason.split('\n')[0]!;
  else if (!(await imageExists(engine.client, image)))
    skip = `image ${image} is missing: run scripts/docker/etcd-image.sh`;
  if (skip && process.env['LIMBO_DOCKER_REQUIRED'] === '1')
    throw new Error(`LIMBO_DOCKER_REQUIRED=1 but ${skip}`);
  return skip;
}

const skip = await skipReason();

test(
  'etcd on --runtime docker: members are containers of the declared image; a peer cut into the leader passes; nothing left',
  { skip },
  async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'limbo-etcd-docker-'));
    t.after(() => rmSync(out, { recursive: true, force: true }));
    const { suite } = await loadSuite(join(root, 'chaos', 'peers', 'leader-inbound-cut.ts'));
    const etcd = await resolveTarget('etcd', 'docker');
    assert.equal(etcd.runtime, 'docker');
    const owner = { [LABEL_OWNER]: ensureReaper().owner };
    let started: StartedTarget | undefined;
    let containers = 0;
    let leaderAtStart: string | undefined;
    const target: Target = {
      ...etcd,
      start: async (topology, ctx) => {
        started = await etcd.start(topology, ctx);
        containers = (await listContainersByLabel(await dockerClient(), owner)).length;
        leaderAtStart = await started.leaderOf(0);
        return started;
      },
    };
    const res = await runSuite(suite, { target, seed: 11, outRoot: out, replay: 'test', trace: false });
    assert.ok(started !== undefined);
    assert.equal(containers, 3, 'three etcd members ran as containers');
    for (const s of started.services.values()) assert.equal(s.pid(), undefined, `${s.name} has no host PID`);
    assert.match(leaderAtStart ?? '', /^etcd-[123]$/);
    const v = res.verdict;
    assert.equal(v.verdict, 'pass', JSON.stringify(v.checks.map((c) => [c.name, c.verdict, c.summary])));
    assert.ok(v.ops.ok > 100, `calls were made and answered (${v.ops.ok} ok)`);
    assert.match(res.run.faults[0]?.target ?? '', /^\*->etcd-[123]$/);
    // Each member wrote its data where the declaration's {{dataDir}} said, on the host.
    for (const n of [1, 2, 3]) {
      const dir = join(res.runDir, 'data', `etcd-${n}`);
      assert.ok(existsSync(dir) && readdirSync(dir).includes('member'), `${dir} holds etcd's member dir`);
    }
    assert.equal((await listContainersByLabel(await dockerClient(), owner)).length, 0, 'no container left');
  },
);
