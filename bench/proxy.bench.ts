// The embedded Toxiproxy server's cost, measured beside a direct connection in the same run:
// added p50/p99 latency per small round trip, bulk MB/s (as ratios to direct), and the
// throughput of a pipelined stream under a 100 ms latency toxic beside the no-toxic figure
// (latency is applied per chunk from arrival, so a stream should not crawl).
import net from 'node:net';
import { Toxiproxy } from 'toxiproxy-node-client';
import { startToxiproxyServer } from '../src/proxy/server.js';

const roundTrips = 2000;
const bulkBytes = 64 * 1024 * 1024;

function listen(onSocket: (s: net.Socket) => void): Promise<net.Server> {
  const server = net.createServer((s) => {
    s.on('error', () => {});
    onSocket(s);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function portOf(x: net.Server | { listen: string }): number {
  if (x instanceof net.Server) return (x.address() as net.AddressInfo).port;
  return Number(x.listen.slice(x.listen.lastIndexOf(':') + 1));
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => resolve(s));
    s.setNoDelay(true);
    s.once('error', reject);
  });
}

async function roundTripTimes(port: number, n: number): Promise<number[]> {
  const s = await connect(port);
  const payload = Buffer.alloc(64, 7);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await new Promise<void>((resolve) => {
      let got = 0;
      const onData = (d: Buffer): void => {
        got += d.length;
        if (got >= payload.length) {
          s.off('data', onData);
          resolve();
        }
      };
      s.on('data', onData);
      s.write(payload);
    });
    times.push(performance.now() - start);
  }
  s.destroy();
  return times;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** Writes `bytes` to a sink that counts them; MB/s from first write to last byte received. */
async function bulkMBps(port: number, sinkDone: () => Promise<void>, bytes: number): Promise<number> {
  const s = await connect(port);
  const chunk = Buffer.alloc(64 * 1024, 1);
  const start = performance.now();
  const done = sinkDone();
  for (let sent = 0; sent < bytes; sent += chunk.length) {
    if (!s.write(chunk)) await new Promise((r) => s.once('drain', r));
  }
  await done;
  const seconds = (performance.now() - start) / 1000;
  s.destroy();
  return bytes / 1e6 / seconds;
}

export async function run(): Promise<void> {
  const echo = await listen((s) => s.pipe(s));
  let target = 0;
  let received = 0;
  let wake: (() => void) | undefined;
  const sink = await listen((s) =>
    s.on('data', (d: Buffer) => {
      received += d.length;
      if (received >= target) wake?.();
    }),
  );
  const sinkDone = (bytes: number) => (): Promise<void> => {
    received = 0;
    target = bytes;
    return new Promise((resolve) => (wake = resolve));
  };
  const server = await startToxiproxyServer({ port: 0 });
  try {
    const client = new Toxiproxy(server.url);
    const echoProxy = await client.createProxy({
      name: 'echo',
      listen: '127.0.0.1:0',
      upstream: `127.0.0.1:${portOf(echo)}`,
    });
    const sinkProxy = await client.createProxy({
      name: 'sink',
      listen: '127.0.0.1:0',
      upstream: `127.0.0.1:${portOf(sink)}`,
    });

    // Warm-up, then alternate direct and proxied blocks so both see the same noise.
    await roundTripTimes(portOf(echo), 200);
    await roundTripTimes(portOf(echoProxy), 200);
    const direct: number[] = [];
    const proxied: number[] = [];
    for (let block = 0; block < 4; block++) {
      direct.push(...(await roundTripTimes(portOf(echo), roundTrips / 4)));
      proxied.push(...(await roundTripTimes(portOf(echoProxy), roundTrips / 4)));
    }
    const [d50, d99, p50, p99] = [
      percentile(direct, 50),
      percentile(direct, 99),
      percentile(proxied, 50),
      percentile(proxied, 99),
    ];
    const out = (line: string): boolean => process.stdout.write(line + '\n');
    out(`round trip (64 B, ${roundTrips} each)   direct p50 ${d50.toFixed(3)} ms  p99 ${d99.toFixed(3)} ms`);
    out(`                              proxied p50 ${p50.toFixed(3)} ms  p99 ${p99.toFixed(3)} ms`);
    out(
      `  added by the proxy          p50 +${(p50 - d50).toFixed(3)} ms (×${(p50 / d50).toFixed(2)})  p99 +${(p99 - d99).toFixed(3)} ms (×${(p99 / d99).toFixed(2)})`,
    );

    let directMBps = 0;
    let proxiedMBps = 0;
    for (let i = 0; i < 2; i++) {
      directMBps = Math.max(directMBps, await bulkMBps(portOf(sink), sinkDone(bulkBytes), bulkBytes));
      proxiedMBps = Math.max(proxiedMBps, await bulkMBps(portOf(sinkProxy), sinkDone(bulkBytes), bulkBytes));
    }
    out(
      `bulk (${bulkBytes / 1024 / 1024} MiB, best of 2)       direct ${directMBps.toFixed(0)} MB/s  proxied ${proxiedMBps.toFixed(0)} MB/s  ratio ${(proxiedMBps / directMBps).toFixed(2)}`,
    );

    await sinkProxy.addToxic({
      name: 'lat',
      type: 'latency',
      stream: 'upstream',
      toxicity: 1,
      attributes: { latency: 100, jitter: 0 },
    });
    const latencyMBps = await bulkMBps(portOf(sinkProxy), sinkDone(bulkBytes), bulkBytes);
    out(
      `pipelined stream under 100 ms latency: ${latencyMBps.toFixed(0)} MB/s beside ${proxiedMBps.toFixed(0)} MB/s without (ratio ${(latencyMBps / proxiedMBps).toFixed(2)}; serialised per chunk would be ~${((64 * 1024) / 1e6 / 0.1).toFixed(1)} MB/s)`,
    );
  } finally {
    await server.stop();
    echo.close();
    sink.close();
  }
}
