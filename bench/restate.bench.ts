// The same workload on `reference` and on the real Restate server (`restate`), one after the
// other in one run, printed as restate/reference ratios: calls/s and p99 of the suites' op mix
// from 4 closed-loop clients (well below the ~135 calls/s two cores take), and the time from a
// kill -9 of partition 0's leader until every op in flight at the kill was answered.
// LIMBO_BENCH_RESTATE=0 skips it (it starts two clusters, ~1 min).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTarget } from '../src/targets/registry.js';
import { restateProfile } from '../src/targets/restate/target.js';
import type { StartedTarget } from '../src/targets/target.js';
import { createClock } from '../src/util/clock.js';
import { createRandom } from '../src/util/random.js';
import { pairOps } from '../src/run-data/run-data.js';
import { createHistoryRecorder } from '../src/workload/history.js';
import { startWorkload } from '../src/workload/workload.js';
import { Backoff } from '../src/util/backoff.js';
import { fmt } from './load.js';
import { recordGoal } from './summary.js';

const LOAD_MS = 10_000;
const CONCURRENCY = 4;
const KILL_LOAD_MS = 4_000;
const DRAIN_MS = 30_000;

/**
 * The least time an op of the mix takes on any implementation: a Sleep call's own sleep, and
 * a Flaky call's retries at the shortest delays of the retry policy both targets share (the
 * reference's Backoff, which restate/services.ts matches: 50 ms doubling, each delay at least
 * half its step). Every other op counts 0, so the bound is generous.
 */
function leastWaitMs(body: unknown): number {
  if (body === null || typeof body !== 'object') return 0;
  const b = body as { ms?: unknown; failFirst?: unknown };
  if (typeof b.ms === 'number') return b.ms;
  if (typeof b.failFirst !== 'number') return 0;
  const shortest = new Backoff({ random: () => 0 });
  let wait = 0;
  for (let k = 0; k < b.failFirst; k++) wait += shortest.next();
  return wait;
}

interface Figures {
  callsPerSec: number;
  /** The ops/s the mix's own waits allow these clients with no overhead at all. */
  floorOpsPerSec: number;
  p99Ms: number;
  killAnsweredMs: number;
  inFlightAtKill: number;
}

async function measure(t: StartedTarget): Promise<Figures> {
  const clock = createClock();
  // Load: closed loop, ok calls only.
  const history = createHistoryRecorder(clock);
  const base = {
    baseUrls: t.ingressUrls,
    history,
    opTimeoutMs: 30_000,
    mix: { call: 0.6, send: 0.2, counterAdd: 0.2 },
  };
  const wl = startWorkload({
    ...base,
    api: restateProfile.clientApi,
    random: createRandom(1),
    concurrency: CONCURRENCY,
  });
  await new Promise((r) => setTimeout(r, LOAD_MS));
  await wl.stop(DRAIN_MS);
  const ok = pairOps(history.ops).filter((p) => p.end?.type === 'ok');
  const lat = ok.map((p) => p.end!.timeMs - p.invoke.timeMs).sort((a, b) => a - b);
  const callsPerSec = lat.length / (LOAD_MS / 1000);
  // The clients' loops spend at least the ops' own waits, shared over CONCURRENCY clients.
  const waitsMs = ok.reduce((sum, p) => sum + leastWaitMs(p.invoke.request?.body), 0);
  const floorOpsPerSec = waitsMs > 0 ? (ok.length * CONCURRENCY * 1000) / waitsMs : Infinity;
  const p99Ms = lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.99))] ?? NaN;

  // Leader kill: 30 ops/s; kill partition 0's leader; time until the ops open at the kill ended.
  const h2 = createHistoryRecorder(clock);
  const wl2 = startWorkload({
    ...base,
    history: h2,
    api: restateProfile.clientApi,
    random: createRandom(2),
    concurrency: 8,
    maxRatePerSec: 30,
  });
  await new Promise((r) => setTimeout(r, KILL_LOAD_MS));
  const victim = await t.leaderOf(0);
  // Kill with calls in flight: wait (bounded) until a few are open.
  const waitUntil = Date.now() + 5000;
  while (h2.inFlight() < 3 && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 2));
  const open = new Set(h2.openOps().map((o) => o.opId));
  const killedAt = clock.nowMs();
  if (victim !== undefined) await t.services.get(victim)?.kill();
  const deadline = Date.now() + DRAIN_MS;
  while (Date.now() < deadline && h2.openOps().some((o) => open.has(o.opId)))
    await new Promise((r) => setTimeout(r, 20));
  const killAnsweredMs = clock.nowMs() - killedAt;
  await wl2.stop(0);
  if (victim !== undefined) await t.services.get(victim)?.restart();
  return { callsPerSec, floorOpsPerSec, p99Ms, killAnsweredMs, inFlightAtKill: open.size };
}

export async function run(): Promise<void> {
  if (process.env.LIMBO_BENCH_RESTATE === '0') return;
  const figures: Record<string, Figures> = {};
  for (const name of ['reference', 'restate']) {
    const dir = mkdtempSync(join(tmpdir(), `limbo-bench-${name.replace(':', '-')}-`));
    const t = await createTarget(name).start({ processors: 3, partitions: 4, ingresses: 3 }, { runDir: dir });
    try {
      figures[name] = await measure(t);
    } finally {
      await t.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    const f = figures[name];
    process.stdout.write(
      `${name.padEnd(10)} ${fmt(f.callsPerSec)} ops/s (the mix's own waits allow ≤ ${fmt(f.floorOpsPerSec)})  p99 ${fmt(f.p99Ms, 0)} ms  after leader kill: ${f.inFlightAtKill} in flight answered within ${fmt(f.killAnsweredMs, 0)} ms\n`,
    );
  }
  const r = figures['restate']!;
  const ref = figures['reference']!;
  // No implementation of the reference can beat its mix's own waits: that bound ÷ Restate's
  // ops/s is the most this ratio can be on this run's Restate.
  const ceiling = ref.floorOpsPerSec / r.callsPerSec;
  recordGoal(
    'referenceVsRestate',
    ref.callsPerSec / r.callsPerSec,
    `at most ${fmt(ceiling, 2)} with no overhead`,
  );
  recordGoal('killAnswered', ref.killAnsweredMs, `${ref.inFlightAtKill} in flight`);
  process.stdout.write(
    `restate/reference: ops/s ${fmt(r.callsPerSec / ref.callsPerSec, 2)}, p99 ${fmt(r.p99Ms / ref.p99Ms, 2)}, in-flight answered after leader kill ${fmt(r.killAnsweredMs / ref.killAnsweredMs, 2)}\n`,
  );
}
