// Starts a real reference cluster for tests: the log server, N processors and an ingress,
// each a child process (`limbo serve …`) on free ports of 127.0.0.1, with a temp data dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLimboService, type StartedProcess } from '../../src/runtime/process.js';
import { scrape, sumSamples } from '../../src/telemetry/prom-text.js';
import { createControllerClient } from '../../src/transport/grpc.js';
import type { PartitionTable } from '../../src/protocol/wire.js';

export interface ClusterOptions {
  processors?: number;
  partitions?: number;
  protocol?: 'rpc' | 'legacy';
  /** Start the processors now (default) or later with startProcessors(). */
  startProcessors?: boolean;
  /** Per processor: the address the ingress should dial instead of the real one (a test proxy). */
  advertise?: (index: number) => string | undefined;
  ingressArgs?: string[];
  /** Extra arguments of every processor's `limbo serve processor`. */
  processorArgs?: string[];
  /** Environment of every service (e.g. OTEL_* to export traces). */
  env?: NodeJS.ProcessEnv;
}

export class TestCluster implements AsyncDisposable {
  readonly processors: (StartedProcess | undefined)[] = [];
  ingress!: StartedProcess;
  log!: StartedProcess;
  private readonly dataDir = mkdtempSync(join(tmpdir(), 'limbo-cluster-'));

  private constructor(
    private readonly o: Required<
      Omit<ClusterOptions, 'advertise' | 'ingressArgs' | 'processorArgs' | 'env'>
    > &
      ClusterOptions,
  ) {}

  static async start(options: ClusterOptions = {}): Promise<TestCluster> {
    const c = new TestCluster({
      processors: 3,
      partitions: 4,
      protocol: 'rpc',
      startProcessors: true,
      ...options,
    });
    try {
      c.log = await startLimboService(
        'log',
        ['--data-dir', c.dataDir, '--partitions', String(c.o.partitions)],
        { name: 'log', ...(c.o.env ? { env: c.o.env } : {}) },
      );
      c.ingress = await startLimboService(
        'ingress',
        ['--log-address', c.logAddress, '--protocol', c.o.protocol, ...(options.ingressArgs ?? [])],
        { name: 'ingress-1', ...(c.o.env ? { env: c.o.env } : {}) },
      );
      if (c.o.startProcessors) await c.startProcessors();
    } catch (err) {
      await c.stop();
      throw err;
    }
    return c;
  }

  get logAddress(): string {
    return this.log.ready.addresses.grpc as string;
  }

  get url(): string {
    return this.ingress.ready.addresses.http as string;
  }

  async startProcessors(): Promise<void> {
    await Promise.all(Array.from({ length: this.o.processors }, (_, i) => this.startProcessor(i)));
  }

  async startProcessor(i: number): Promise<StartedProcess> {
    const node = `processor-${i + 1}`;
    const adv = this.o.advertise?.(i);
    const p = await startLimboService(
      'processor',
      [
        '--node',
        node,
        '--log-address',
        this.logAddress,
        '--protocol',
        this.o.protocol,
        ...(adv ? ['--advertised-address', adv] : []),
        ...(this.o.processorArgs ?? []),
      ],
      { name: node, ...(this.o.env ? { env: this.o.env } : {}) },
    );
    this.processors[i] = p;
    return p;
  }

  async table(): Promise<PartitionTable> {
    const c = createControllerClient(this.logAddress);
    try {
      return await c.getPartitionTable({}, { timeoutMs: 2000 });
    } finally {
      c.close();
    }
  }

  /** Waits (bounded) until every partition has a leader that is running. */
  async waitForLeaders(timeoutMs = 15_000): Promise<PartitionTable> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const t = await this.table();
      if (t.partitions.length === this.o.partitions && t.partitions.every((p) => p.leaderNode !== '')) {
        // A leader leads once it has applied its announce: ask each one's metrics.
        const leading = await this.leadingPartitions();
        if (t.partitions.every((p) => leading.get(p.partition) === p.leaderNode)) return t;
      }
      if (Date.now() > deadline) throw new Error(`no leader for every partition within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** partition → node whose limbo_processor_is_leader is 1. */
  async leadingPartitions(): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const p of this.processors) {
      if (!p?.isRunning()) continue;
      const samples = await scrape(p.ready.addresses.metrics as string).catch(() => []);
      for (const s of samples) {
        if (s.name === 'limbo_processor_is_leader' && s.value === 1)
          out.set(Number(s.labels.partition), p.ready.node);
      }
    }
    return out;
  }

  async ingressMetric(name: string, labels: Record<string, string> = {}): Promise<number> {
    return sumSamples(await scrape(this.ingress.ready.addresses.metrics as string), name, labels);
  }

  async stop(): Promise<void> {
    await Promise.all([this.ingress?.stop(), ...this.processors.map((p) => p?.stop())]);
    await this.log?.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

export interface CallResult {
  status: number;
  body: unknown;
  invocationId: string | null;
}

export async function call(
  base: string,
  path: string,
  body?: unknown,
  options: { method?: string; headers?: Record<string, string>; timeoutMs?: number; raw?: string } = {},
): Promise<CallResult> {
  const res = await fetch(base + path, {
    method: options.method ?? (body === undefined && options.raw === undefined ? 'GET' : 'POST'),
    headers: { 'content-type': 'application/json', ...options.headers },
    body: options.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed, invocationId: res.headers.get('x-limbo-invocation-id') };
}
