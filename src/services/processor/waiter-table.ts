// The requests a partition leader holds until the log answers them, with one index per way
// the replica looks them up:
//
//   add(waiter) ───────────▶ all (insertion order)     stepDown answers every one
//                           ├ byRequest  requestId      a resend takes over the slot
//                           ├ byProposal proposal seq   the Invoke's apply (or its drop)
//                           └ byOutput   invocationId   the End's apply
//
// Each waiter remembers its own proposal seq, so removing one costs O(1) and answering all
// of them at a step-down costs O(waiters), not O(waiters × proposals). The table only keeps
// the indices; the replica decides what each waiter is answered (partition-replica.ts).

export interface Waiter<R> {
  readonly id: number;
  readonly requestId: string;
  readonly invocationId: string;
  /** SUBMITTED waiters resolve on apply of the Invoke; OUTPUT waiters on the End. */
  readonly wants: 'submitted' | 'output';
  readonly kind: 'submit' | 'getOutput';
  /** Set once the reply is sent (the waiter left the table). */
  done: boolean;
  /** The proposal seq this waiter is answered on, while it waits for one. */
  proposalSeq: number | undefined;
  reply(response: R): void;
}

export class WaiterTable<R> {
  private readonly all = new Set<Waiter<R>>();
  private readonly byRequest = new Map<string, Waiter<R>>();
  private readonly byProposal = new Map<number, Waiter<R>>();
  private readonly byOutput = new Map<string, Set<Waiter<R>>>();

  get size(): number {
    return this.all.size;
  }

  /**
   * Adds a waiter; returns the waiter of the same (non-empty) request id it replaces in the
   * request index, if one is still waiting.
   */
  add(waiter: Waiter<R>): Waiter<R> | undefined {
    this.all.add(waiter);
    if (waiter.requestId === '') return undefined;
    const prev = this.byRequest.get(waiter.requestId);
    this.byRequest.set(waiter.requestId, waiter);
    return prev !== undefined && !prev.done ? prev : undefined;
  }

  /** The waiter is answered when proposal `seq` is applied (or dropped). */
  awaitProposal(seq: number, waiter: Waiter<R>): void {
    this.byProposal.set(seq, waiter);
    waiter.proposalSeq = seq;
  }

  /** The waiter answered on proposal `seq`, taken out of the proposal index. */
  takeProposal(seq: number): Waiter<R> | undefined {
    const waiter = this.byProposal.get(seq);
    if (waiter === undefined) return undefined;
    this.byProposal.delete(seq);
    waiter.proposalSeq = undefined;
    return waiter;
  }

  /** Forgets proposal `seq` if `waiter` still waits on it. */
  dropProposal(seq: number, waiter: Waiter<R>): void {
    if (this.byProposal.get(seq) === waiter) this.takeProposal(seq);
  }

  /** The waiter is answered when its invocation ends. A done waiter is not added. */
  awaitOutput(waiter: Waiter<R>): void {
    if (waiter.done) return;
    let set = this.byOutput.get(waiter.invocationId);
    if (!set) this.byOutput.set(waiter.invocationId, (set = new Set()));
    set.add(waiter);
  }

  /** Every waiter for the output of `invocationId`, taken out of the output index. */
  takeOutput(invocationId: string): ReadonlySet<Waiter<R>> | undefined {
    const set = this.byOutput.get(invocationId);
    if (set) this.byOutput.delete(invocationId);
    return set;
  }

  /** `next` (a resend of the same request) takes `prev`'s proposal and output slots. */
  takeOver(prev: Waiter<R>, next: Waiter<R>): void {
    const seq = prev.proposalSeq;
    if (seq !== undefined && this.byProposal.get(seq) === prev) {
      this.byProposal.set(seq, next);
      prev.proposalSeq = undefined;
      next.proposalSeq = seq;
    }
    const set = this.byOutput.get(prev.invocationId);
    if (set?.delete(prev)) set.add(next);
  }

  /** Marks the waiter done and removes it from every index; false if it already was done. */
  remove(waiter: Waiter<R>): boolean {
    if (waiter.done) return false;
    waiter.done = true;
    this.all.delete(waiter);
    if (this.byRequest.get(waiter.requestId) === waiter) this.byRequest.delete(waiter.requestId);
    const set = this.byOutput.get(waiter.invocationId);
    if (set?.delete(waiter) && set.size === 0) this.byOutput.delete(waiter.invocationId);
    if (waiter.proposalSeq !== undefined) this.dropProposal(waiter.proposalSeq, waiter);
    return true;
  }

  /** A snapshot of every waiting waiter, oldest first. */
  waiting(): Waiter<R>[] {
    return [...this.all];
  }

  /** Sizes of the indices (for tests and debugging). */
  indexSizes(): { all: number; byRequest: number; byProposal: number; byOutput: number } {
    let outputs = 0;
    for (const set of this.byOutput.values()) outputs += set.size;
    return {
      all: this.all.size,
      byRequest: this.byRequest.size,
      byProposal: this.byProposal.size,
      byOutput: outputs,
    };
  }
}
