// The cluster controller: failure detection by heartbeats, one live leader per partition,
// and the partition table as a stream.
//
//   Heartbeat(node, address, partitions) ─▶ nodes (last seen) ─┐
//   tick (every timeout/20, 10–100 ms)    ─────────────────────┼─▶ reconcile (one at a time)
//   TransferLeadership / external CAS     ─────────────────────┘      │
//        keep a live leader; else pick the live host with the fewest  │
//        leaderships (ties rotate by partition) and claim epoch+1 by  ▼
//        CAS in the metadata store ──▶ table (version+1 on any change) ─▶ watchers
//
// Stable while healthy: a live leader is never moved except by TransferLeadership. After a
// restart the metadata comes back from disk but nodes are unknown until they heartbeat, so
// a leader that has not been heard from is kept for one failure timeout after start.
import type * as w from '../../protocol/wire.js';
import type { BugName } from '../bugs.js';
import type { Logger } from '../../telemetry/logger.js';
import { LogServerError, unknownPartition } from './errors.js';
import type { MetadataStore } from './metadata-store.js';

export type LeaderChangeReason = 'failure' | 'transfer' | 'startup';

export interface ControllerOptions {
  numPartitions: number;
  failureTimeoutMs: number;
  metadata: MetadataStore;
  logger: Logger;
  /** Monotonic clock in ms. */
  now?: () => number;
  /** Wall clock in ms: the base of table versions, so they keep growing across restarts. */
  wallNow?: () => number;
  /**
   * A partition that never had a leader waits this long after the first heartbeat, so that
   * processors started together share the partitions instead of the first one taking all.
   */
  startupSettleMs?: number;
  /**
   * Processors expected to start together: once this many nodes have sent a heartbeat the
   * settle ends at once (0 or unset: always wait startupSettleMs).
   */
  expectNodes?: number;
  tickMs?: number;
  maxNodes?: number;
  /** `change` names the new epoch, which fences every proposal of an older one. */
  onLeaderChange?(
    partition: number,
    reason: LeaderChangeReason,
    change?: { from: string; to: string; epoch: number },
  ): void;
  onTable?(table: w.PartitionTable): void;
  /** Bug switches (src/services/bugs.ts). */
  bugs?: ReadonlySet<BugName>;
}

interface NodeState {
  node: string;
  address: string;
  /** undefined = every partition (a heartbeat with an empty list). */
  partitions: Set<number> | undefined;
  lastSeenMs: number;
  alive: boolean;
}

const NODE_NAME_CHARS_MAX = 200;

export class Controller {
  private readonly nodes = new Map<string, NodeState>();
  private readonly watchers = new Set<(table: w.PartitionTable) => void>();
  /** Partitions whose metadata leader lost leadership and no one could take over yet. */
  private readonly vacated: boolean[];
  private readonly now: () => number;
  private readonly startedMs: number;
  private firstHeartbeatMs: number | undefined;
  private table: w.PartitionTable;
  private tableKey = '';
  private ops: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly o: ControllerOptions) {
    this.now = o.now ?? (() => performance.now());
    this.startedMs = this.now();
    this.vacated = Array.from({ length: o.numPartitions }, () => false);
    this.table = {
      version: Math.floor((o.wallNow ?? Date.now)()),
      numPartitions: o.numPartitions,
      partitions: [],
      nodes: [],
    };
    this.publish();
  }

  start(): void {
    const tickMs = this.o.tickMs ?? Math.max(10, Math.min(100, Math.floor(this.o.failureTimeoutMs / 20)));
    this.timer = setInterval(() => void this.requestReconcile(), tickMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.watchers.clear();
    await this.ops;
  }

  get failureTimeoutMs(): number {
    return this.o.failureTimeoutMs;
  }

  currentTable(): w.PartitionTable {
    return this.table;
  }

  /** Calls `listener` with the current table at once, then on every change. */
  watch(listener: (table: w.PartitionTable) => void): () => void {
    this.watchers.add(listener);
    listener(this.table);
    return () => this.watchers.delete(listener);
  }

  async heartbeat(req: w.HeartbeatRequest): Promise<w.HeartbeatResponse> {
    const node = checkNodeName(req.node);
    for (const p of req.partitions) this.checkPartition(p);
    const now = this.now();
    let state = this.nodes.get(node);
    if (!state) {
      this.makeRoomForNode();
      state = { node, address: req.address, partitions: undefined, lastSeenMs: now, alive: true };
      this.nodes.set(node, state);
      this.o.logger.info('node joined', { node, address: req.address });
    } else if (!state.alive) {
      this.o.logger.info('node is alive again', { node });
    }
    state.address = req.address;
    state.partitions = req.partitions.length > 0 ? new Set(req.partitions) : undefined;
    state.lastSeenMs = now;
    state.alive = true;
    this.firstHeartbeatMs ??= now;
    await this.requestReconcile();
    return { table: this.table, failureTimeoutMs: this.o.failureTimeoutMs };
  }

  /** Moves one partition's leadership to `node` (alive, hosting it), bumping the epoch. */
  transferLeadership(partition: number, node: string): Promise<w.PartitionAssignment> {
    this.checkPartition(partition);
    if (node === '') throw new LogServerError('E_BAD_REQUEST', 'TransferLeadership needs a node');
    this.checkCanLead(partition, node);
    const run = async (): Promise<w.PartitionAssignment> => {
      this.updateLiveness(this.now());
      this.checkCanLead(partition, node);
      const m = this.o.metadata.get(partition);
      const res = await this.o.metadata.compareAndSwap(partition, m.epoch, node);
      if (!res.ok)
        throw new LogServerError('E_LOG_FAILED', `partition ${partition} changed during the transfer`);
      this.vacated[partition] = false;
      this.leaderChanged(partition, m, res.leaderNode, res.epoch, 'transfer');
      this.publish();
      return this.assignment(partition);
    };
    const result = this.ops.then(run);
    this.ops = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** Asks for a reconcile (coalesced with one already waiting); resolves once it has run. */
  requestReconcile(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.queued) return this.queued;
    const run = this.ops.then(async () => {
      this.queued = undefined;
      if (!this.stopped) await this.reconcile();
    });
    const settled = run.catch((err: unknown) => this.o.logger.error('reconcile failed', { error: err }));
    this.queued = settled;
    this.ops = settled;
    return settled;
  }

  /** Metadata CAS from outside (e.g. a tool); the table follows at once. */
  async compareAndSwapLeader(req: w.CompareAndSwapLeaderRequest): Promise<w.CompareAndSwapLeaderResponse> {
    this.checkPartition(req.partition);
    const res = await this.o.metadata.compareAndSwap(req.partition, req.expectedEpoch, req.leaderNode);
    if (res.ok) {
      this.vacated[req.partition] = false;
      this.o.logger.info('leader set by compare-and-swap', { partition: req.partition, ...res });
      await this.requestReconcile();
    }
    return { ok: res.ok, epoch: res.epoch, leaderNode: res.leaderNode };
  }

  private checkPartition(partition: number): void {
    if (!Number.isInteger(partition) || partition < 0 || partition >= this.o.numPartitions)
      throw unknownPartition(partition, this.o.numPartitions);
  }

  private checkCanLead(partition: number, node: string): void {
    const state = this.nodes.get(node);
    if (!state)
      throw new LogServerError('E_NODE_NOT_ALIVE', `node "${node}" is unknown: it has not sent a heartbeat`);
    if (!this.isAlive(state, this.now()))
      throw new LogServerError(
        'E_NODE_NOT_ALIVE',
        `node "${node}" is not alive: silent for ${Math.round(this.now() - state.lastSeenMs)} ms`,
      );
    if (!hosts(state, partition))
      throw new LogServerError(
        'E_NODE_NOT_HOSTING',
        `node "${node}" hosts no replica of partition ${partition}`,
      );
  }

  private isAlive(state: NodeState, now: number): boolean {
    // Bug switch slow-failure-detection: the timeout read in the wrong unit (ten times too long).
    const slow = this.o.bugs?.has('slow-failure-detection') === true ? 10 : 1;
    return now - state.lastSeenMs < this.o.failureTimeoutMs * slow;
  }

  private updateLiveness(now: number): void {
    for (const s of this.nodes.values()) {
      const alive = this.isAlive(s, now);
      if (s.alive && !alive)
        this.o.logger.warn('node is dead: no heartbeat within the failure timeout', {
          node: s.node,
          silentMs: Math.round(now - s.lastSeenMs),
        });
      s.alive = alive;
    }
  }

  private makeRoomForNode(): void {
    if (this.nodes.size < (this.o.maxNodes ?? 1000)) return;
    let oldest: NodeState | undefined;
    for (const s of this.nodes.values())
      if (!s.alive && (!oldest || s.lastSeenMs < oldest.lastSeenMs)) oldest = s;
    if (!oldest) throw new LogServerError('E_OVERLOADED', `too many nodes (${this.nodes.size})`);
    this.nodes.delete(oldest.node);
  }

  private currentLeaderValid(partition: number, leaderNode: string, now: number): boolean {
    if (leaderNode === '' || this.vacated[partition]) return false;
    const state = this.nodes.get(leaderNode);
    if (state) return state.alive && hosts(state, partition);
    // Not heard from since this server started: give it one failure timeout to show up.
    return now - this.startedMs < this.o.failureTimeoutMs;
  }

  private async reconcile(): Promise<void> {
    for (let pass = 0; pass < 3; pass++) {
      const now = this.now();
      this.updateLiveness(now);
      const live = [...this.nodes.values()].filter((s) => s.alive).sort((a, b) => compare(a.node, b.node));
      const counts = new Map<string, number>(live.map((s) => [s.node, 0]));
      const needy: number[] = [];
      for (let p = 0; p < this.o.numPartitions; p++) {
        const m = this.o.metadata.get(p);
        if (this.currentLeaderValid(p, m.leaderNode, now)) {
          if (counts.has(m.leaderNode)) counts.set(m.leaderNode, (counts.get(m.leaderNode) ?? 0) + 1);
        } else needy.push(p);
      }
      const expected = this.o.expectNodes ?? 0;
      const settled =
        this.firstHeartbeatMs !== undefined &&
        (now - this.firstHeartbeatMs >= (this.o.startupSettleMs ?? 0) ||
          (expected > 0 && this.nodes.size >= expected));
      let raced = false;
      for (const p of needy) {
        const m = this.o.metadata.get(p);
        const candidates = live.filter((s) => hosts(s, p));
        if (candidates.length === 0 || (m.leaderNode === '' && !settled)) {
          if (m.leaderNode !== '' && !this.vacated[p]) {
            this.vacated[p] = true;
            this.o.logger.warn('partition has no live replica to lead it', { partition: p, epoch: m.epoch });
          }
          continue;
        }
        const pick = pickLeader(candidates, counts, p);
        const res = await this.o.metadata.compareAndSwap(p, m.epoch, pick);
        if (!res.ok) {
          raced = true;
          continue;
        }
        counts.set(pick, (counts.get(pick) ?? 0) + 1);
        this.vacated[p] = false;
        this.leaderChanged(p, m, pick, res.epoch, m.leaderNode === '' ? 'startup' : 'failure');
      }
      this.publish();
      if (!raced) return;
    }
  }

  private leaderChanged(
    partition: number,
    from: { leaderNode: string; epoch: number },
    to: string,
    epoch: number,
    reason: LeaderChangeReason,
  ): void {
    this.o.logger.info('leader changed', { partition, from: from.leaderNode, to, epoch, reason });
    this.o.onLeaderChange?.(partition, reason, { from: from.leaderNode, to, epoch });
  }

  private assignment(partition: number): w.PartitionAssignment {
    const m = this.o.metadata.get(partition);
    const leaderNode = this.currentLeaderValid(partition, m.leaderNode, this.now()) ? m.leaderNode : '';
    return {
      partition,
      leaderNode,
      epoch: m.epoch,
      leaderAddress: leaderNode === '' ? '' : (this.nodes.get(leaderNode)?.address ?? ''),
    };
  }

  /** Rebuilds the table; on any change bumps the version and tells every watcher. */
  private publish(): void {
    const partitions = Array.from({ length: this.o.numPartitions }, (_, p) => this.assignment(p));
    const nodes: w.NodeInfo[] = [...this.nodes.values()]
      .sort((a, b) => compare(a.node, b.node))
      .map((s) => ({
        node: s.node,
        address: s.address,
        alive: s.alive,
        partitions: s.partitions
          ? [...s.partitions].sort((a, b) => a - b)
          : Array.from({ length: this.o.numPartitions }, (_, p) => p),
      }));
    const key = JSON.stringify([partitions, nodes]);
    if (key === this.tableKey) return;
    this.tableKey = key;
    this.table = { version: this.table.version + 1, numPartitions: this.o.numPartitions, partitions, nodes };
    this.o.onTable?.(this.table);
    for (const listener of this.watchers) listener(this.table);
  }
}

function hosts(state: NodeState, partition: number): boolean {
  return state.partitions === undefined || state.partitions.has(partition);
}

/** Fewest leaderships first; among equals rotate by partition number over sorted names. */
function pickLeader(candidates: NodeState[], counts: Map<string, number>, partition: number): string {
  let fewest = Infinity;
  for (const c of candidates) fewest = Math.min(fewest, counts.get(c.node) ?? 0);
  const tied = candidates.filter((c) => (counts.get(c.node) ?? 0) === fewest);
  return (tied[partition % tied.length] as NodeState).node;
}

function checkNodeName(node: string): string {
  if (node === '') throw new LogServerError('E_BAD_REQUEST', 'heartbeat needs a node name');
  if (node.length > NODE_NAME_CHARS_MAX)
    throw new LogServerError('E_BAD_REQUEST', `node name is longer than ${NODE_NAME_CHARS_MAX} characters`);
  return node;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
