// One standard suite run on a declared target from targets/ (etcd, nats …), the way the CLI
// runs it, noting what end-to-end tests ask of it afterwards: who led once the target was
// ready and the services' PIDs (to check that none is left running).
import type { TestContext } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSuite } from '../../src/runner/load-suites.js';
import { runSuite } from '../../src/runner/run-suite.js';
import { resolveTarget } from '../../src/targets/registry.js';
import type { Target } from '../../src/targets/target.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

export async function runOnDeclared(
  t: TestContext,
  targetName: string,
  suiteFile: string,
  seed: number,
): Promise<{
  res: Awaited<ReturnType<typeof runSuite>>;
  started: boolean;
  leaderAtStart?: string;
  pids: number[];
}> {
  const out = mkdtempSync(join(tmpdir(), `limbo-${targetName}-`));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const { suite } = await loadSuite(join(root, suiteFile));
  const declared = await resolveTarget(targetName);
  let started = false;
  let leaderAtStart: string | undefined;
  let pids: number[] = [];
  const target: Target = {
    name: declared.name,
    ...(declared.profile !== undefined ? { profile: declared.profile } : {}),
    start: async (topology, ctx) => {
      const s = await declared.start(topology, ctx);
      started = true;
      leaderAtStart = await s.leaderOf(0);
      pids = [...s.services.values()].flatMap((x) => x.pid() ?? []);
      return s;
    },
  };
  const res = await runSuite(suite, { target, seed, outRoot: out, replay: 'test', trace: false });
  return { res, started, ...(leaderAtStart !== undefined ? { leaderAtStart } : {}), pids };
}
