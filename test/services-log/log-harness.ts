// Shared by the log server tests: temp data dirs, the server as a real child process, and
// bounded waits on streams and partition tables.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControllerClient, grpc } from '../../src/transport/grpc.js';
import type { LogEntry, PartitionTable, ReadResponse } from '../../src/protocol/wire.js';
import { limboCommand, startLimboService, type StartedProcess } from '../../src/runtime/process.js';

/** Record i of a test, `bytes` long: its number, then a byte that tells records apart. */
export function recordOf(i: number, bytes: number): Buffer {
  const b = Buffer.alloc(bytes, i % 251);
  b.writeUInt32LE(i, 0);
  return b;
}

export function tempDir(prefix = 'limbo-log-test-'): { path: string } & Disposable {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

export function startLog(dataDir: string, args: readonly string[] = []): Promise<StartedProcess> {
  return startLimboService('log', ['--data-dir', dataDir, ...args], { name: 'log', readyTimeoutMs: 20_000 });
}

export function grpcAddress(p: StartedProcess): string {
  return p.ready.addresses.grpc as string;
}

/** kill -9 and wait for the exit. */
export async function crash(p: StartedProcess): Promise<void> {
  p.kill('SIGKILL');
  await p.exited;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Reads from a Read stream until `count` entries have arrived (bounded by timeoutMs). */
export function collectEntries(
  stream: grpc.ClientReadableStream<ReadResponse>,
  count: number,
  timeoutMs: number,
): Promise<LogEntry[]> {
  const got: LogEntry[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stream.cancel();
      reject(new Error(`read ${got.length} of ${count} entries within ${timeoutMs} ms`));
    }, timeoutMs);
    stream.on('data', (r: ReadResponse) => {
      got.push(...r.entries);
      if (got.length >= count) {
        clearTimeout(timer);
        stream.cancel();
        resolve(got);
      }
    });
    stream.on('error', (err: grpc.ServiceError) => {
      clearTimeout(timer);
      if (got.length < count) reject(err);
    });
  });
}

/** Watches the partition table; `until` resolves with the first table matching `pred`. */
export class TableWatch implements Disposable {
  latest: PartitionTable | undefined;
  private readonly stream: grpc.ClientReadableStream<PartitionTable>;
  private readonly waiters = new Set<() => void>();

  constructor(controller: ControllerClient) {
    this.stream = controller.watchPartitionTable({ watcher: 'test' });
    this.stream.on('data', (t: PartitionTable) => {
      this.latest = t;
      for (const w of this.waiters) w();
    });
    this.stream.on('error', () => {});
  }

  until(pred: (t: PartitionTable) => boolean, timeoutMs: number, what = 'table'): Promise<PartitionTable> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (this.latest && pred(this.latest)) {
          this.waiters.delete(check);
          clearTimeout(timer);
          resolve(this.latest);
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`no ${what} within ${timeoutMs} ms; last: ${JSON.stringify(this.latest)}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  [Symbol.dispose](): void {
    this.stream.cancel();
  }
}

/** A processor stand-in: heartbeats every `intervalMs` until stopped. */
export class FakeProcessor implements Disposable {
  private timer: NodeJS.Timeout | undefined;
  beats = 0;

  constructor(
    private readonly controller: ControllerClient,
    readonly node: string,
    readonly address: string,
    readonly partitions: number[] = [],
    private readonly intervalMs = 250,
  ) {}

  start(): this {
    const beat = (): void => {
      this.controller
        .heartbeat(
          { node: this.node, address: this.address, partitions: this.partitions },
          { timeoutMs: 1000 },
        )
        .then(
          () => this.beats++,
          () => {},
        );
    };
    beat();
    this.timer = setInterval(beat, this.intervalMs);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  [Symbol.dispose](): void {
    this.stop();
  }
}

/** Runs `limbo serve log …` expecting it to fail fast: exit code and stderr (bounded). */
export function runLogExpectingExit(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 15_000,
): Promise<{ code: number | null; stderr: string }> {
  const cmd = limboCommand();
  const child = spawn(cmd.command, [...cmd.args, 'serve', 'log', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`limbo serve log ${args.join(' ')} still running after ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** The value of one sample of a Prometheus text page (undefined when absent). */
export async function metricValue(
  url: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const text = await (await fetch(url, { signal: AbortSignal.timeout(5000) })).text();
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = new Map<string, string>();
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) have.set(k as string, v as string);
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) return Number(m[3]);
  }
  return undefined;
}
