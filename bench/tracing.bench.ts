// Calls/s with the full tracing of a run — every service exporting to the run's OTLP receiver,
// the open-span ledger on, and one client span per call — beside the services' OTLP export
// alone and tracing off, same cluster shape, same run. The goal (at least 0.95) is
// what the ledger and the client spans cost: calls/s with them on ÷ with them off, the services
// exporting over OTLP on both sides; the ratio to no tracing at all is printed beside it (what
// the services' spans themselves cost). And whether the receiver kept up: spans dropped (over
// its bound, refused as malformed, or lost by the in-process ledger) must be 0.
import { startOtlpReceiver } from '../src/observe/otlp-receiver.js';
import { SPAN_LEDGER_PATH } from '../src/telemetry/span-ledger.js';
import { inProcessTracing } from '../src/observe/in-process-tracing.js';
import { DEFAULT_BSP_DELAY_MS } from '../src/observe/span-sink.js';
import { SPAN_LEDGER_ENV, type Tracing } from '../src/telemetry/tracing.js';
import { startClientSpan } from '../src/workload/client-span.js';
import { TestCluster } from '../test/helpers/cluster.js';
import { closedLoop, cpuMsOf, fmt, warmUp } from './load.js';
import { recordGoal } from './summary.js';

const DURATION_MS = Number(process.env.LIMBO_BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = 16;
const ROUNDS = Number(process.env.LIMBO_BENCH_ROUNDS ?? 3);

/**
 * Calls/s, and CPU ms per call over every service process and this one (load generator,
 * client spans, receiver): on a shared machine the CPU a call costs moves much less with the
 * neighbours' load than calls/s does.
 */
async function measure(
  env: NodeJS.ProcessEnv,
  client?: Tracing,
): Promise<{ perSecond: number; p99Ms: number; cpuMsPerCall: number }> {
  await using cluster = await TestCluster.start({ processors: 3, partitions: 4, env });
  await cluster.waitForLeaders();
  const pids = [cluster.log, cluster.ingress, ...cluster.processors].flatMap((p) => (p ? [p.pid] : []));
  const cpuNow = (): number => {
    const self = process.cpuUsage();
    return pids.reduce((sum, pid) => sum + cpuMsOf(pid), (self.user + self.system) / 1000);
  };
  const send = async (): Promise<boolean> => {
    const span = client === undefined ? undefined : startClientSpan(client.tracer, 'call', 0, undefined);
    const r = await fetch(`${cluster.url}/Echo/echo`, {
      method: 'POST',
      body: '{"x":1}',
      headers: span === undefined ? {} : { traceparent: span.traceparent },
    });
    await r.arrayBuffer();
    span?.end({ type: r.status === 200 ? 'ok' : 'fail', response: { status: r.status } });
    return r.status === 200;
  };
  // Until the rate settles (load.ts): a cold cluster's first seconds measure the JIT.
  await warmUp(send, CONCURRENCY);
  const cpu0 = cpuNow();
  const r = await closedLoop(send, CONCURRENCY, DURATION_MS);
  return { ...r, cpuMsPerCall: (cpuNow() - cpu0) / Math.max(1, r.requests) };
}

export async function run(): Promise<void> {
  const plain = { ...process.env };
  delete plain.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete plain.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  delete plain[SPAN_LEDGER_ENV];
  let received = 0;
  // Keeps every span (as a run's receiver does for its checkers), so "over bound" means dropped.
  await using receiver = await startOtlpReceiver({
    maxSpans: 5_000_000,
    onSpans: (s) => (received += s.length),
  });
  // The services' batch delay a run gives them (span-sink.ts).
  const otlpOnly = {
    ...plain,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: String(DEFAULT_BSP_DELAY_MS),
  };
  const traced = { ...otlpOnly, [SPAN_LEDGER_ENV]: `${receiver.url}${SPAN_LEDGER_PATH}` };
  // Alternate to spread the machine's noise over every side.
  const off: number[] = [];
  const otlp: number[] = [];
  const on: number[] = [];
  const cpu = { off: [] as number[], otlp: [] as number[], on: [] as number[] };
  let ledgerDropped = 0;
  const sides = [
    async (): Promise<void> => {
      const a = await measure(plain);
      off.push(a.perSecond);
      cpu.off.push(a.cpuMsPerCall);
    },
    async (): Promise<void> => {
      const b = await measure(otlpOnly);
      otlp.push(b.perSecond);
      cpu.otlp.push(b.cpuMsPerCall);
    },
    async (): Promise<void> => {
      // As a run's span sink makes it: the client spans go straight into the in-process receiver.
      const client = inProcessTracing('client', receiver);
      const c = await measure(traced, client);
      on.push(c.perSecond);
      cpu.on.push(c.cpuMsPerCall);
      await client.shutdown();
      ledgerDropped += client.ledgerDropped();
    },
  ];
  // Each round starts with the next side: the receiver keeps every span in this process, so
  // whichever side always ran last would always run beside the most spans held.
  for (let round = 0; round < ROUNDS; round++)
    for (let i = 0; i < sides.length; i++) await sides[(round + i) % sides.length]!();
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const dropped = receiver.dropped + receiver.rejected + ledgerDropped;
  const list = (xs: number[]): string => xs.map((x) => fmt(x, 0)).join(', ');
  const list2 = (xs: number[]): string => xs.map((x) => fmt(x, 2)).join(', ');
  console.log(`concurrency ${CONCURRENCY}, ${DURATION_MS} ms per side per round, ${ROUNDS} rounds`);
  console.log(`tracing off: ${list(off)} calls/s`);
  console.log(`services' OTLP only (no ledger, no client spans): ${list(otlp)} calls/s`);
  console.log(`tracing on (OTLP + open-span ledger + client spans): ${list(on)} calls/s`);
  console.log(
    `spans received over OTLP: ${received}; ledger: ${receiver.ledger.starts} open at a tick, ${receiver.ledger.ends} of them ended later`,
  );
  console.log(
    `spans dropped: ${dropped} (receiver over bound ${receiver.dropped}, refused ${receiver.rejected}, client ledger ${ledgerDropped}) (goal 0)`,
  );
  console.log(`ratio calls/s OTLP only ÷ off: ${fmt(mean(otlp) / mean(off), 3)}`);
  recordGoal(
    'tracingOverhead',
    mean(on) / mean(otlp),
    dropped === 0 ? undefined : `${dropped} spans dropped`,
  );
  console.log(
    `ratio calls/s ledger + client spans on ÷ off (services' OTLP on both sides): ${fmt(mean(on) / mean(otlp), 3)} (goal ≥ 0.95)`,
  );
  console.log(`ratio calls/s tracing on ÷ no tracing at all: ${fmt(mean(on) / mean(off), 3)}`);
  console.log(
    `CPU ms per call (all services + this process): off ${list2(cpu.off)}, OTLP only ${list2(cpu.otlp)}, on ${list2(cpu.on)}`,
  );
  console.log(
    `ratio CPU per call OTLP only ÷ on (what the goal's calls/s ratio would be on an otherwise idle, CPU-bound machine): ${fmt(mean(cpu.otlp) / mean(cpu.on), 3)}; off ÷ on ${fmt(mean(cpu.off) / mean(cpu.on), 3)}`,
  );
}
