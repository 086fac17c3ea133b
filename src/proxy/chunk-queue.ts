// A bounded FIFO of stream chunks between two stages of a link, with one reader.
//
//   stage k ──push()──▶ [ChunkQueue] ──receive()──▶ stage k+1
//
// push() is synchronous so that a stage being rewired can never hold an item "in flight":
// every byte is either in a queue or owned by exactly one running stage. Backpressure is
// cooperative: a producer awaits waitForSpace() before taking more input, so a queue holds
// at most its capacity plus the pieces of one chunk.
export const END = Symbol('end');

export interface StreamChunk {
  data: Buffer;
  /** When the chunk arrived at the proxy (or was last released by a delaying toxic), performance.now() ms. */
  timestampMs: number;
}
export type StreamItem = StreamChunk | typeof END;

/**
 * What the data path waits with instead of an AbortSignal: every chunk's wait registers on
 * one, and an AbortSignal's listener bookkeeping (EventTarget) and the DOMException each abort
 * builds were among the data path's largest costs with 1,000 connections streaming, on the
 * event loop the control plane answers from.
 */
export class Interrupt {
  aborted = false;
  private readonly hooks = new Set<() => void>();

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const hook of [...this.hooks]) hook();
    this.hooks.clear();
  }

  /** Calls `hook` once on abort (never when already aborted); off() forgets it. */
  on(hook: () => void): void {
    if (!this.aborted) this.hooks.add(hook);
  }

  off(hook: () => void): void {
    this.hooks.delete(hook);
  }
}

export interface QueueLimits {
  capacityBytes: number;
  capacityChunks: number;
}
export const defaultQueueLimits: QueueLimits = { capacityBytes: 4 * 1024 * 1024, capacityChunks: 4096 };

export class ChunkQueue {
  private items: StreamItem[] = [];
  private bytes = 0;
  private dataWaiter: (() => void) | undefined;
  private spaceWaiters = new Set<() => void>();

  constructor(private readonly limits: QueueLimits = defaultQueueLimits) {}

  get length(): number {
    return this.items.length;
  }

  get isFull(): boolean {
    return this.bytes >= this.limits.capacityBytes || this.items.length >= this.limits.capacityChunks;
  }

  push(item: StreamItem): void {
    this.items.push(item);
    if (item !== END) this.bytes += item.data.length;
    const wake = this.dataWaiter;
    this.dataWaiter = undefined;
    wake?.();
  }

  /** Takes every queued item (used when a stage is spliced out). */
  takeAll(): StreamItem[] {
    const all = this.items;
    this.items = [];
    this.bytes = 0;
    this.wakeSpaceWaiters();
    return all;
  }

  /** Next item, or undefined once `signal` aborts (an item is never lost to an abort). */
  async receive(signal: Interrupt, timeoutMs?: number): Promise<StreamItem | undefined | 'timeout'> {
    const deadline = timeoutMs === undefined ? undefined : performance.now() + timeoutMs;
    for (;;) {
      if (signal.aborted) return undefined;
      const item = this.items.shift();
      if (item !== undefined) {
        if (item !== END) this.bytes -= item.data.length;
        if (!this.isFull) this.wakeSpaceWaiters();
        return item;
      }
      const leftMs = deadline === undefined ? undefined : deadline - performance.now();
      if (leftMs !== undefined && leftMs <= 0) return 'timeout';
      await this.waitForData(signal, leftMs);
    }
  }

  /** Resolves when the queue is below capacity, retired or `signal` aborts. */
  waitForSpace(signal: Interrupt): Promise<void> {
    if (!this.isFull || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.spaceWaiters.delete(done);
        signal.off(done);
        resolve();
      };
      this.spaceWaiters.add(done);
      signal.on(done);
    });
  }

  /** The queue is no longer written to by its producer: wake anyone waiting for space on it. */
  retire(): void {
    this.wakeSpaceWaiters();
  }

  private wakeSpaceWaiters(): void {
    for (const wake of [...this.spaceWaiters]) wake();
  }

  private waitForData(signal: Interrupt, timeoutMs: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        if (this.dataWaiter === done) this.dataWaiter = undefined;
        signal.off(done);
        if (timer !== undefined) clearTimeout(timer);
        resolve();
      };
      this.dataWaiter = done;
      signal.on(done);
      if (timeoutMs !== undefined) timer = setTimeout(done, timeoutMs);
    });
  }
}
