// The ingress's table of requests in flight: every request from arrival until its answer,
// so a client left hanging shows in limbo_ingress_pending_requests (the gauge, kept by the
// HTTP API) and limbo_ingress_oldest_pending_seconds (read from here at scrape time).
import type { RequestKind } from './metrics.js';

export interface PendingRequest {
  readonly kind: RequestKind;
  /** performance.now() at arrival. */
  readonly startedAt: number;
}

export class PendingTable {
  private readonly requests = new Map<number, PendingRequest>();
  private nextId = 1;

  get size(): number {
    return this.requests.size;
  }

  /** Records a request arriving now; returns its id in the table. */
  add(kind: RequestKind, startedAt: number): number {
    const id = this.nextId++;
    this.requests.set(id, { kind, startedAt });
    return id;
  }

  /** Takes the request out of the table; false if it was not (or no longer) in it. */
  delete(id: number): boolean {
    return this.requests.delete(id);
  }

  /** Seconds the oldest request in the table has waited at `now` (performance.now()); 0 if none. */
  oldestAgeSeconds(now: number): number {
    let oldest = Infinity;
    for (const p of this.requests.values()) oldest = Math.min(oldest, p.startedAt);
    return oldest === Infinity ? 0 : (now - oldest) / 1000;
  }
}
