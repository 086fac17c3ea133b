// Durable append throughput and latency of the log at 1, 16 and 64 concurrent appenders,
// beside the raw fsync rate of the same disk measured in the same run (the physical limit
// of one fsync per append). appends/s ÷ raw fsyncs/s above 1 is group commit at work;
// "per fsync" shows it directly (records acknowledged per fdatasync of the log).
//
//   raw:    write(100 B) + fdatasync in a loop on a temp file            → fsyncs/s
//   server: N appenders ─gRPC Append─▶ `limbo serve log` child process     → appends/s, p50, p99
//   store:  N appenders ─▶ LogStore in this process (no gRPC: the log's own ceiling)
//   floor:  N appenders ─raw TCP frames─▶ pipeline-node.js log (a child process: O_DSYNC group
//           commit and an acknowledgement, nothing else), over as many connections as the
//           server's clients — the server's ceiling in a Node process of its own
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogClient, type LogClient } from '../src/transport/grpc.js';
import { startLimboService } from '../src/runtime/process.js';
import { LogStore } from '../src/services/log/log-store.js';
import { silentLogger } from '../src/telemetry/logger.js';
import { connectFrames, frameTypes, type Conn } from './frames.js';
import { startLogFloor } from './pipeline-floor.js';
import { recordGoal } from './summary.js';

const RECORD_BYTES = 100;
const RUN_MS = Number(process.env.LIMBO_BENCH_MS ?? 3000);
const CONCURRENCY = [1, 16, 64];

async function rawFsyncsPerSecond(dir: string, durationMs: number): Promise<number> {
  const fh = await open(join(dir, 'raw-fsync.bin'), 'a+');
  const buf = Buffer.alloc(RECORD_BYTES, 7);
  let count = 0;
  const start = performance.now();
  try {
    while (performance.now() - start < durationMs) {
      await fh.write(buf, 0, buf.length, null);
      await fh.datasync();
      count++;
    }
  } finally {
    await fh.close();
  }
  return count / ((performance.now() - start) / 1000);
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** Sum of limbo_log_fsyncs_total over partitions, from a /metrics page. */
async function scrapeFsyncs(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(5000) })).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('limbo_log_fsyncs_total{')) sum += Number(line.split(' ').pop());
  return sum;
}

interface Subject {
  name: string;
  append(worker: number): Promise<unknown>;
  fsyncs(): Promise<number>;
}

/** appends/s ÷ raw fsyncs/s at 64 appenders, by subject. */
const ratios64 = new Map<string, number>();

/** Appenders over `connections` raw TCP connections to the floor's log: each append answered by its ACK. */
async function floorClients(
  port: number,
  connections: number,
): Promise<{
  append(worker: number): Promise<void>;
  close(): void;
}> {
  const waiting = new Map<number, () => void>();
  const conns = await Promise.all(
    Array.from({ length: connections }, () =>
      connectFrames(port, (f) => {
        const done = waiting.get(f.id);
        if (f.type === frameTypes.ack && done !== undefined) {
          waiting.delete(f.id);
          done();
        }
      }),
    ),
  );
  let nextId = 1;
  const record = Buffer.alloc(RECORD_BYTES, 42);
  return {
    append: (worker) =>
      new Promise<void>((resolve) => {
        const id = nextId++ >>> 0;
        waiting.set(id, resolve);
        (conns[worker % conns.length] as Conn).send(frameTypes.append, id, 0, record);
      }),
    close: () => {
      for (const c of conns) c.socket.destroy();
    },
  };
}

async function measure(subject: Subject, dir: string, concurrency: number): Promise<string[]> {
  const raw = await rawFsyncsPerSecond(dir, Math.min(1500, RUN_MS));
  const latenciesMs: number[] = [];
  const fsyncsBefore = await subject.fsyncs();
  const start = performance.now();
  const deadline = start + RUN_MS;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await subject.append(worker);
        latenciesMs.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const fsyncs = (await subject.fsyncs()) - fsyncsBefore;
  latenciesMs.sort((a, b) => a - b);
  const appendsPerSecond = latenciesMs.length / seconds;
  if (concurrency === 64) ratios64.set(subject.name, appendsPerSecond / raw);
  return [
    subject.name,
    String(concurrency),
    appendsPerSecond.toFixed(0),
    percentile(latenciesMs, 0.5).toFixed(2),
    percentile(latenciesMs, 0.99).toFixed(2),
    Number.isNaN(fsyncs) ? '-' : (latenciesMs.length / Math.max(1, fsyncs)).toFixed(1),
    raw.toFixed(0),
    (appendsPerSecond / raw).toFixed(2),
  ];
}

export async function run(): Promise<void> {
  const root = process.env.LIMBO_BENCH_DIR ?? tmpdir();
  const dir = mkdtempSync(join(root, 'limbo-log-bench-'));
  const record = Buffer.alloc(RECORD_BYTES, 42);
  process.stdout.write(
    `disk: ${dir}; ${RECORD_BYTES}-byte records, ${RUN_MS} ms per row, raw fsync loop measured just before each row\n`,
  );
  const rows: string[][] = [];
  // The server as its own process, as in a cluster: it and the appenders each get a core.
  const server = await startLimboService('log', ['--data-dir', join(dir, 'server'), '--partitions', '1']);
  const metricsUrl = server.ready.addresses.metrics as string;
  const clients: LogClient[] = Array.from({ length: 4 }, () =>
    createLogClient(server.ready.addresses.grpc as string),
  );
  let storeFsyncs = 0;
  const store = await LogStore.open({
    dataDir: join(dir, 'store'),
    numPartitions: 1,
    maxRecordBytes: 1024 * 1024,
    logger: silentLogger,
    hooks: () => ({ onFsync: () => storeFsyncs++ }),
  });
  try {
    for (const c of clients) await c.append({ partition: 0, records: [record] }, { timeoutMs: 10_000 });
    const serverSubject: Subject = {
      name: 'server',
      append: (worker) =>
        (clients[worker % clients.length] as LogClient).append(
          { partition: 0, records: [record] },
          { timeoutMs: 10_000 },
        ),
      fsyncs: () => scrapeFsyncs(metricsUrl),
    };
    const storeSubject: Subject = {
      name: 'store',
      append: () => store.append(0, [record]),
      fsyncs: () => Promise.resolve(storeFsyncs),
    };
    for (const subject of [serverSubject, storeSubject])
      for (const concurrency of CONCURRENCY) rows.push(await measure(subject, dir, concurrency));
    {
      await using floor = await startLogFloor(1);
      const floorClient = await floorClients(floor.port, clients.length);
      try {
        const floorSubject: Subject = {
          name: 'floor',
          append: (worker) => floorClient.append(worker),
          fsyncs: () => Promise.resolve(NaN),
        };
        for (const concurrency of CONCURRENCY) rows.push(await measure(floorSubject, dir, concurrency));
      } finally {
        floorClient.close();
      }
    }
    recordGoal(
      'logAppends',
      ratios64.get('server') ?? NaN,
      `the no-work floor ${(ratios64.get('floor') ?? NaN).toFixed(1)}`,
    );
  } finally {
    for (const c of clients) c.close();
    await server.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const header = [
    'subject',
    'appenders',
    'appends/s',
    'p50 ms',
    'p99 ms',
    'per fsync',
    'raw fsyncs/s',
    'appends/s ÷ raw fsyncs/s',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  process.stdout.write(line(header) + '\n' + rows.map(line).join('\n') + '\n');
}
