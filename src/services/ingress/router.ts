// Routing for the ingress: watches the partition table and hands out one processor client
// (one HTTP/2 connection) per processor address.
//
//   Controller.WatchPartitionTable (reconnects with backoff) ─▶ table ─▶ leaderFor(partition)
//                                                              └─▶ waiters for the next change
import {
  createControllerClient,
  createProcessorClient,
  type ControllerClient,
  type ProcessorClient,
} from '../../transport/grpc.js';
import { partitionKeyOfInvocation, partitionOf } from '../../protocol/ids.js';
import type * as w from '../../protocol/wire.js';
import type { Logger } from '../../telemetry/logger.js';
import { noBugs, type BugName } from '../bugs.js';
import { Backoff, sleep } from '../../util/backoff.js';
import type { TableMetrics } from './table-metrics.js';

export interface Route {
  node: string;
  address: string;
  epoch: number;
}

export class Router {
  private table: w.PartitionTable | undefined;
  private readonly controller: ControllerClient;
  private readonly clients = new Map<string, ProcessorClient>();
  private readonly changeWaiters = new Set<() => void>();
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    logAddress: string,
    private readonly watcher: string,
    private readonly logger: Logger,
    private readonly bugs: ReadonlySet<BugName> = noBugs,
    private readonly metrics?: TableMetrics,
  ) {
    this.controller = createControllerClient(logAddress);
  }

  start(): void {
    this.loop = this.watch();
  }

  async stop(): Promise<void> {
    this.abort.abort(new Error('router stopped'));
    await this.loop;
    this.controller.close();
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
    for (const wake of this.changeWaiters) wake();
  }

  get numPartitions(): number | undefined {
    return this.table?.numPartitions;
  }

  get current(): w.PartitionTable | undefined {
    return this.table;
  }

  partitionOfInvocation(invocationId: string): number | undefined {
    const pk = partitionKeyOfInvocation(invocationId);
    const n = this.table?.numPartitions;
    return pk === undefined || n === undefined || n === 0 ? undefined : partitionOf(pk, n);
  }

  leaderFor(partition: number): Route | undefined {
    const a = this.table?.partitions.find((p) => p.partition === partition);
    if (!a || a.leaderNode === '' || a.leaderAddress === '') return undefined;
    return { node: a.leaderNode, address: a.leaderAddress, epoch: a.epoch };
  }

  /** The address of a node by name, from the table's node list (for NOT_LEADER hints). */
  addressOf(node: string): string | undefined {
    const n = this.table?.nodes.find((x) => x.node === node && x.alive);
    return n?.address || undefined;
  }

  client(address: string): ProcessorClient {
    let c = this.clients.get(address);
    // Bug switch dead-connection-after-heal: the reconnect backoff in the wrong unit (60 s, not
    // 100 ms to 1 s), so a connection lost in a brief partition stays dead long after the heal.
    const slowRedial = this.bugs.has('dead-connection-after-heal')
      ? { 'grpc.initial_reconnect_backoff_ms': 60_000, 'grpc.max_reconnect_backoff_ms': 60_000 }
      : undefined;
    if (!c) this.clients.set(address, (c = createProcessorClient(address, slowRedial)));
    return c;
  }

  /**
   * Resolves on the next table change, after `timeoutMs`, or when aborted (never rejects).
   * Whichever comes first, the timer and the abort listener go with it: a timer left armed
   * kept a stopping ingress alive for up to a backoff (1 s) after a request had waited here.
   */
  async waitForChange(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    this.changeWaiters.add(wake);
    const timer = setTimeout(wake, timeoutMs);
    signal?.addEventListener('abort', wake, { once: true });
    if (signal?.aborted === true) wake();
    try {
      await woken;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', wake);
      this.changeWaiters.delete(wake);
    }
  }

  private async watch(): Promise<void> {
    const backoff = new Backoff();
    while (!this.abort.signal.aborted) {
      try {
        await new Promise<void>((resolve, reject) => {
          const stream = this.controller.watchPartitionTable(
            { watcher: this.watcher },
            { signal: this.abort.signal },
          );
          let first = true;
          stream.on('data', (table: w.PartitionTable) => {
            backoff.reset();
            // The first table of a new stream is always taken: versions restart with the server.
            this.setTable(table, first);
            first = false;
          });
          stream.on('error', reject);
          stream.on('end', resolve);
        });
      } catch (err) {
        if (!this.abort.signal.aborted) this.logger.debug('partition table watch broke', { error: err });
      }
      await sleep(backoff.next(), this.abort.signal).catch(() => undefined);
    }
  }

  private setTable(table: w.PartitionTable, force: boolean): void {
    if (!force && this.table && table.version < this.table.version) {
      this.metrics?.stale();
      return;
    }
    this.table = table;
    this.metrics?.applied(table.version);
    const wakers = [...this.changeWaiters];
    this.changeWaiters.clear();
    for (const wake of wakers) wake();
  }
}
