// The deterministic state of one partition: the same records in the same order give the
// same state on every replica. Nothing here reads a clock or a random source.
//
//   log entry ─▶ decode ─▶ apply ─▶ ApplyEffect (announce | invoked | ended | dropped)
//                                     └─▶ the replica turns effects into replies and work
//
// Fencing: a proposal (Invoke or End from a leader) is applied only if it carries the
// announced epoch and a sequence number above the last one applied in that epoch; anything
// else was proposed by a deposed leader (or is a duplicate) and is dropped.
import type { EndRecord, InvokeRecord, LogRecord } from '../../protocol/records.js';

/** What an invocation keeps of its Invoke record, plus where it stands. */
export interface InvocationState extends Pick<
  InvokeRecord,
  | 'invocationId'
  | 'service'
  | 'key'
  | 'handler'
  | 'payload'
  | 'idempotencyKey'
  | 'traceparent'
  | 'ingressId'
  | 'requestId'
> {
  // `payload` (the request body) is '' once the invocation completed: nothing reads a finished
  // invocation's input, and completed invocations are kept for the output retention (an hour
  // by default), so a body kept beside each would hold ~retention × calls/s × its size.
  /** LSN of the Invoke record: keyed invocations run in this order. */
  invokedAtLsn: number;
  status: 'invoked' | 'completed';
  output?: CompletedOutput;
  /** The output was dropped after the retention period (this replica's clock). */
  expired?: boolean;
}

export interface CompletedOutput {
  success: boolean;
  value: string;
  failure: string;
  completedAtLsn: number;
}

export type ApplyEffect =
  | { kind: 'announce'; node: string; epoch: number }
  | { kind: 'invoked'; invocation: InvocationState; isNew: boolean; record: InvokeRecord }
  | { kind: 'ended'; invocation: InvocationState; record: EndRecord }
  | { kind: 'dropped'; reason: 'stale_epoch' | 'duplicate' | 'unknown_invocation' | 'already_ended' };

export interface StateMachineOptions {
  /** Bug switch fenced-ack: the sequence dedup is not reset when a new epoch is announced. */
  keepSeqAcrossEpochs?: boolean;
}

export class PartitionStateMachine {
  constructor(private readonly options: StateMachineOptions = {}) {}

  leaderEpoch = 0;
  leaderNode = '';
  appliedLsn = 0;
  private lastSeq = 0;
  private readonly invocations = new Map<string, InvocationState>();
  /**
   * The invoked and not ended, in the order their Invoke records applied (a Map keeps
   * insertion order), kept as records apply: a new leader's running() reads these, not every
   * invocation the partition has ever kept (completed ones stay for the output retention and
   * after, millions in a long run).
   */
  private readonly runningInvocations = new Map<string, InvocationState>();
  private readonly kv = new Map<string, string>();
  /** Kept as records apply, so the per-entry metrics never scan the invocations. */
  private invokedCount = 0;
  private completedCount = 0;

  apply(lsn: number, record: LogRecord): ApplyEffect {
    this.appliedLsn = lsn;
    switch (record.type) {
      case 'announce_leader':
        if (record.epoch <= this.leaderEpoch) return { kind: 'dropped', reason: 'stale_epoch' };
        this.leaderEpoch = record.epoch;
        this.leaderNode = record.node;
        if (this.options.keepSeqAcrossEpochs !== true) this.lastSeq = 0;
        return { kind: 'announce', node: record.node, epoch: record.epoch };
      case 'invoke': {
        if (record.proposal) {
          const fenced = this.fence(record.proposal.epoch, record.proposal.seq);
          if (fenced) return fenced;
        }
        const existing = this.invocations.get(record.invocationId);
        if (existing) return { kind: 'invoked', invocation: existing, isNew: false, record };
        // Field by field (no rest/spread): this runs for every invoke on every replica.
        const invocation: InvocationState = {
          invocationId: record.invocationId,
          service: record.service,
          key: record.key,
          handler: record.handler,
          payload: record.payload,
          invokedAtLsn: lsn,
          status: 'invoked',
        };
        if (record.idempotencyKey !== undefined) invocation.idempotencyKey = record.idempotencyKey;
        if (record.traceparent !== undefined) invocation.traceparent = record.traceparent;
        if (record.ingressId !== undefined) invocation.ingressId = record.ingressId;
        if (record.requestId !== undefined) invocation.requestId = record.requestId;
        this.invocations.set(record.invocationId, invocation);
        this.runningInvocations.set(record.invocationId, invocation);
        this.invokedCount++;
        return { kind: 'invoked', invocation, isNew: true, record };
      }
      case 'end': {
        const fenced = this.fence(record.proposal.epoch, record.proposal.seq);
        if (fenced) return fenced;
        const invocation = this.invocations.get(record.invocationId);
        if (!invocation) return { kind: 'dropped', reason: 'unknown_invocation' };
        if (invocation.status === 'completed') return { kind: 'dropped', reason: 'already_ended' };
        for (const u of record.stateUpdates) {
          if (u.value === null) this.kv.delete(u.key);
          else this.kv.set(u.key, u.value);
        }
        invocation.status = 'completed';
        invocation.payload = '';
        this.runningInvocations.delete(record.invocationId);
        this.invokedCount--;
        this.completedCount++;
        invocation.output = {
          success: record.success,
          value: record.value,
          failure: record.failure,
          completedAtLsn: lsn,
        };
        return { kind: 'ended', invocation, record };
      }
    }
  }

  private fence(epoch: number, seq: number): ApplyEffect | undefined {
    if (epoch !== this.leaderEpoch) return { kind: 'dropped', reason: 'stale_epoch' };
    if (seq <= this.lastSeq) return { kind: 'dropped', reason: 'duplicate' };
    this.lastSeq = seq;
    return undefined;
  }

  get(invocationId: string): InvocationState | undefined {
    return this.invocations.get(invocationId);
  }

  getState(key: string): string | undefined {
    return this.kv.get(key);
  }

  /** Invoked but not ended, in log order: what a new leader must (re)run. */
  running(): InvocationState[] {
    return [...this.runningInvocations.values()];
  }

  counts(): { invoked: number; completed: number } {
    return { invoked: this.invokedCount, completed: this.completedCount };
  }

  /**
   * Forgets the output value of a completed invocation (retention expiry on this replica's
   * own clock). The invocation stays known as completed, so expiry never changes how later
   * records apply.
   */
  forgetOutput(invocationId: string): void {
    const inv = this.invocations.get(invocationId);
    if (inv?.output) {
      // Not `delete`: that turns the object into a slower, larger dictionary, one of millions.
      inv.output = undefined;
      inv.expired = true;
    }
  }
}
