// Calls/s with tracing exporting to a run's OTLP receiver versus tracing off, same cluster
// shape, same run, as a ratio (goal: at least 0.9).
import { startOtlpReceiver } from '../src/observe/otlp-receiver.js';
import { TestCluster } from '../test/helpers/cluster.js';
import { closedLoop, fmt } from './load.js';

const DURATION_MS = Number(process.env.LIMBO_BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = 16;

async function measure(env: NodeJS.ProcessEnv): Promise<{ perSecond: number; p99Ms: number }> {
  await using cluster = await TestCluster.start({ processors: 3, partitions: 4, env });
  await cluster.waitForLeaders();
  const send = (): Promise<boolean> =>
    fetch(`${cluster.url}/Echo/echo`, { method: 'POST', body: '{"x":1}' }).then(async (r) => {
      await r.arrayBuffer();
      return r.status === 200;
    });
  await closedLoop(send, CONCURRENCY, 1000); // warm-up
  return await closedLoop(send, CONCURRENCY, DURATION_MS);
}

export async function run(): Promise<void> {
  const plain = { ...process.env };
  delete plain.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete plain.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  await using receiver = await startOtlpReceiver({ maxSpans: 0 });
  const traced = { ...plain, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
  // Alternate to spread the machine's noise over both sides.
  const off: number[] = [];
  const on: number[] = [];
  for (let round = 0; round < 2; round++) {
    off.push((await measure(plain)).perSecond);
    on.push((await measure(traced)).perSecond);
  }
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`concurrency ${CONCURRENCY}, ${DURATION_MS} ms per side per round, 2 rounds`);
  console.log(`tracing off: ${off.map((x) => fmt(x, 0)).join(', ')} calls/s`);
  console.log(
    `tracing on : ${on.map((x) => fmt(x, 0)).join(', ')} calls/s (spans exported to the receiver: ${receiver.dropped})`,
  );
  console.log(`ratio calls/s on ÷ off: ${fmt(mean(on) / mean(off), 3)} (goal ≥ 0.9)`);
}
