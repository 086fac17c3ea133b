// GET /events (an extension; 2.12 has no such path): what the data plane did, in order —
// connections opened and closed, toxics applied to a connection (their toxicity roll hit)
// and toxics added, updated and removed. A bounded ring: the oldest events fall off, and a
// reader asks `?since=<seq>` for what it has not seen yet.
//
//   proxy / link ──record()──▶ [ring of ≤ capacity events] ◀──since(seq)── GET /events
export type ProxyEventType =
  | 'connection_opened'
  | 'connection_closed'
  | 'toxic_applied'
  | 'toxic_added'
  | 'toxic_updated'
  | 'toxic_removed'
  /** A client's connection accepted, but the upstream could not be dialled: closed at once. */
  | 'upstream_unreachable';

export interface ProxyEvent {
  /** 1, 2, 3, … in the order things happened. */
  seq: number;
  /** Wall clock, ms since the epoch. */
  timeMs: number;
  type: ProxyEventType;
  proxy: string;
  /** Connection id within the proxy (connection_* and toxic_applied). */
  connection?: number;
  /** The client's address (connection_opened). */
  client?: string;
  toxic?: string;
  toxicType?: string;
  stream?: 'upstream' | 'downstream';
}

export type ProxyEventInput = Omit<ProxyEvent, 'seq' | 'timeMs'>;

export const defaultEventCapacity = 10_000;
const maxEventsPerRead = 10_000;

export class ProxyEvents {
  private readonly ring: ProxyEvent[] = [];
  private start = 0;
  private lastSeq = 0;

  constructor(
    private readonly capacity = defaultEventCapacity,
    private readonly now: () => number = Date.now,
  ) {}

  record(event: ProxyEventInput): void {
    this.lastSeq += 1;
    const full: ProxyEvent = { seq: this.lastSeq, timeMs: this.now(), ...event };
    if (this.ring.length < this.capacity) this.ring.push(full);
    else {
      this.ring[this.start] = full;
      this.start = (this.start + 1) % this.capacity;
    }
  }

  /** Events after `seq` (oldest first, at most `limit`), and the seq to ask from next. */
  since(seq: number, limit = maxEventsPerRead): { events: ProxyEvent[]; next: number; dropped: number } {
    const n = this.ring.length;
    const events: ProxyEvent[] = [];
    const oldest = n === 0 ? this.lastSeq + 1 : (this.ring[this.start] as ProxyEvent).seq;
    for (let i = 0; i < n && events.length < Math.min(limit, maxEventsPerRead); i++) {
      const e = this.ring[(this.start + i) % n] as ProxyEvent;
      if (e.seq > seq) events.push(e);
    }
    const next =
      events.length > 0 ? (events[events.length - 1] as ProxyEvent).seq : Math.max(seq, this.lastSeq);
    // Events the reader asked for that fell off the ring before it came back.
    const dropped = Math.max(0, oldest - seq - 1);
    return { events, next, dropped };
  }
}
