// Does the fault injector stay responsive under churn? The control plane's p99 (every API call
// of the churn: toxics added, updated and removed, proxies disabled, enabled, deleted and
// recreated, proxies listed and read) with 1,000 connections streaming through the embedded
// proxy, beside the same churn with no connection at all, measured in the same run: the
// ceiling. Then the same churn while the upstream process is killed and restarted. With
// connections, each proxy also carries a client that sends megabytes and never reads, so a
// disable or delete meets bytes it cannot flush. Every call is bounded (test/proxy/churn.ts):
// one without an answer, and a connection neither moving bytes nor closed after a removal,
// disable, delete or kill, are counted; both goals are 0. Each line also gives the event
// loop's delay: calls slow beside a prompt loop wait on something (the server's lock, a
// drain), calls slow with the loop are the loop's (the data path's share of it, or the
// machine's other load).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { percentileMs, runChurn, type ChurnOptions, type ChurnResult } from '../test/proxy/churn.js';
import { fmt } from './load.js';
import { recordGoal } from './summary.js';

const CONNECTIONS = Number(process.env.LIMBO_BENCH_INJECTOR_CONNECTIONS ?? 1000);
const SCALE = Number(process.env.LIMBO_BENCH_INJECTOR_SCALE ?? 1);

const STALLED_READER_BYTES = 16 * 1024 * 1024;

interface Measured extends ChurnResult {
  loopDelayP99Ms: number;
}

async function measure(options: ChurnOptions): Promise<Measured> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  try {
    const r = await runChurn(options);
    return { ...r, loopDelayP99Ms: delay.percentile(99) / 1e6 };
  } finally {
    delay.disable();
  }
}

function line(label: string, r: Measured): { p99: number; unanswered: number } {
  const ms = r.calls.filter((c) => c.outcome !== 'unanswered').map((c) => c.ms);
  const unanswered = r.calls.filter((c) => c.outcome === 'unanswered').length;
  const errors = r.calls.filter((c) => c.outcome === 'error').length;
  const p99 = percentileMs(ms, 99);
  process.stdout.write(
    `${label.padEnd(34)} ${String(r.calls.length).padStart(5)} calls  p50 ${fmt(percentileMs(ms, 50), 1)} ms  p99 ${fmt(p99, 1)} ms  max ${fmt(percentileMs(ms, 100), 1)} ms  unanswered ${unanswered}  errors ${errors}  stuck ${r.stuck.length}/${r.checkedConnections} checked  peak ${r.peakOpen} open, ${r.connectionsOpened} opened, ${r.upstreamKills} kills  server open after ${r.serverOpenAfter}  fds ${r.fdsBefore}->${r.fdsAfter}  loop delay p99 ${fmt(r.loopDelayP99Ms, 1)} ms\n`,
  );
  return { p99, unanswered };
}

export async function run(): Promise<void> {
  const base = { proxies: 8, seed: 7 };
  const idle = await measure({ ...base, connections: 0, durationMs: 8000 * SCALE, killUpstream: false });
  const loaded = await measure({
    ...base,
    connections: CONNECTIONS,
    durationMs: 20_000 * SCALE,
    killUpstream: false,
    stalledReaderBytes: STALLED_READER_BYTES,
  });
  const kills = await measure({
    ...base,
    connections: CONNECTIONS,
    durationMs: 12_000 * SCALE,
    killUpstream: true,
    stalledReaderBytes: STALLED_READER_BYTES,
  });
  const a = line('churn, no connection (ceiling)', idle);
  const b = line(`churn, ${CONNECTIONS} connections`, loaded);
  const c = line(`churn, ${CONNECTIONS} connections, upstream kills`, kills);
  process.stdout.write(
    `control-plane p99 with ${CONNECTIONS} connections ÷ with none: ${fmt(b.p99 / Math.max(a.p99, 0.001), 2)}\n`,
  );
  recordGoal('injectorP99', Math.max(b.p99, c.p99), `${fmt(a.p99, 1)} ms with no connection`);
  recordGoal('injectorUnanswered', a.unanswered + b.unanswered + c.unanswered);
  recordGoal('injectorStuck', loaded.stuck.length + kills.stuck.length);
}
