// The declared etcd target (targets/etcd.limbo.ts) beside the coded reference target, in one
// run: the time from start() until the target serves (every member healthy and a call through
// every client link answered), the RSS of its services at rest and at the end of 5 s of load,
// as etcd/reference ratios; and each one's ops/s under the suites' op mix from 4 closed-loop
// clients — not a ratio: on reference a Sleep call sleeps 10-200 ms, on etcd every call is one put.
// Skipped when etcd is not installed or LIMBO_BENCH_ETCD=0 (~40 s: two clusters).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pairOps } from '../src/run-data/run-data.js';
import { findCommand } from '../src/targets/declarative/validate.js';
import { resolveTarget } from '../src/targets/registry.js';
import { profileOf, type StartedTarget } from '../src/targets/target.js';
import { createClock } from '../src/util/clock.js';
import { createRandom } from '../src/util/random.js';
import { createHistoryRecorder } from '../src/workload/history.js';
import { startWorkload } from '../src/workload/workload.js';
import { fmt, rssMiB } from './load.js';

const LOAD_MS = 5_000;

interface Figures {
  startMs: number;
  services: number;
  rssRestMiB: number;
  rssLoadMiB: number;
  opsPerSec: number;
}

const rssOf = (t: StartedTarget): number =>
  [...t.services.values()].reduce((sum, s) => sum + (s.pid() !== undefined ? rssMiB(s.pid()!) : 0), 0);

async function measure(name: string): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), `limbo-bench-${name}-`));
  const target = await resolveTarget(name);
  const t0 = performance.now();
  const t = await target.start({ processors: 3, partitions: 4 }, { runDir: dir });
  const startMs = performance.now() - t0;
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const rssRestMiB = rssOf(t);
    const history = createHistoryRecorder(createClock());
    const wl = startWorkload({
      baseUrls: t.ingressUrls,
      history,
      opTimeoutMs: 10_000,
      mix: { call: 0.6, send: 0.2, counterAdd: 0.2 },
      api: profileOf(target).clientApi,
      random: createRandom(1),
      concurrency: 4,
    });
    await new Promise((r) => setTimeout(r, LOAD_MS));
    const rssLoadMiB = rssOf(t);
    await wl.stop(10_000);
    const ok = pairOps(history.ops).filter((p) => p.end?.type === 'ok').length;
    return { startMs, services: t.services.size, rssRestMiB, rssLoadMiB, opsPerSec: ok / (LOAD_MS / 1000) };
  } finally {
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  if (process.env.LIMBO_BENCH_ETCD === '0') return;
  if (findCommand('etcd') === undefined) {
    process.stdout.write('etcd is not installed (apt-get install etcd-server): skipped\n');
    return;
  }
  const figures: Record<string, Figures> = {};
  for (const name of ['reference', 'etcd']) {
    const f = (figures[name] = await measure(name));
    process.stdout.write(
      `${name.padEnd(10)} ready in ${fmt(f.startMs, 0)} ms  RSS of ${f.services} services: ${fmt(f.rssRestMiB, 0)} MiB at rest, ${fmt(f.rssLoadMiB, 0)} MiB under load  ${fmt(f.opsPerSec)} ops/s\n`,
    );
  }
  const e = figures['etcd']!;
  const r = figures['reference']!;
  process.stdout.write(
    `etcd/reference: start-up ${fmt(e.startMs / r.startMs, 2)}, RSS at rest ${fmt(e.rssRestMiB / r.rssRestMiB, 2)}, under load ${fmt(e.rssLoadMiB / r.rssLoadMiB, 2)}\n`,
  );
}
