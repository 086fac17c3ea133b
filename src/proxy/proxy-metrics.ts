// Per-proxy byte counters, modelled on the real server's: counted per chunk as it moves,
// so a scrape during a fault shows whether live traffic met it. A chunk adds to a plain tally
// kept per label set, which reaches the counters whenever they are read (their collect), so
// the data path does no label hashing per chunk. Beyond 2.12 (an extension): connections
// opened and closed, and toxics applied to a connection, per proxy.
import { Counter, type Registry } from 'prom-client';
import { toxiproxyMetricNames } from '../protocol/names.js';
import type { Proxy } from './proxy.js';
import type { ProxyEventInput } from './proxy-events.js';
import type { Direction } from './toxic.js';

export const proxyExtensionMetricNames = {
  connectionsTotal: toxiproxyMetricNames.connectionsTotal,
  toxicsAppliedTotal: toxiproxyMetricNames.toxicsAppliedTotal,
} as const;

export interface ProxyMetrics {
  received: (proxy: Proxy, direction: Direction, bytes: number) => void;
  sent: (proxy: Proxy, direction: Direction, bytes: number) => void;
  event: (event: ProxyEventInput) => void;
}

/** Bytes not yet added to the counters, under the labels the proxy had when they moved. */
interface Tally {
  name: string;
  listen: string;
  upstream: string;
  received: Record<Direction, number>;
  sent: Record<Direction, number>;
}

export function createProxyMetrics(registry: Registry): ProxyMetrics {
  const labelNames = ['direction', 'listener', 'proxy', 'upstream'] as const;
  // One tally per label set (as many as the counters hold anyway), zeroed when flushed.
  const tallies = new Map<string, Tally>();
  const current = new WeakMap<Proxy, Tally>();
  const flush = (): void => {
    for (const t of tallies.values()) {
      for (const direction of ['upstream', 'downstream'] as const) {
        const labels = { direction, listener: t.listen, proxy: t.name, upstream: t.upstream };
        if (t.received[direction] > 0) received.inc(labels, t.received[direction]);
        if (t.sent[direction] > 0) sent.inc(labels, t.sent[direction]);
        t.received[direction] = 0;
        t.sent[direction] = 0;
      }
    }
  };
  const tally = (p: Proxy): Tally => {
    const cached = current.get(p);
    if (cached && cached.listen === p.listen && cached.upstream === p.upstream) return cached;
    const key = JSON.stringify([p.name, p.listen, p.upstream]);
    let t = tallies.get(key);
    if (!t) {
      t = {
        name: p.name,
        listen: p.listen,
        upstream: p.upstream,
        received: { upstream: 0, downstream: 0 },
        sent: { upstream: 0, downstream: 0 },
      };
      tallies.set(key, t);
    }
    current.set(p, t);
    return t;
  };
  const received = new Counter({
    name: toxiproxyMetricNames.receivedBytesTotal,
    help: 'Bytes read from a proxied connection, per proxy and direction.',
    labelNames,
    registers: [registry],
    collect: flush,
  });
  const sent = new Counter({
    name: toxiproxyMetricNames.sentBytesTotal,
    help: 'Bytes written to a proxied connection, per proxy and direction.',
    labelNames,
    registers: [registry],
    collect: flush,
  });
  const connections = new Counter({
    name: proxyExtensionMetricNames.connectionsTotal,
    help: 'Proxied connections opened and closed, and dials whose upstream was unreachable, per proxy (limbo extension).',
    labelNames: ['proxy', 'event'] as const,
    registers: [registry],
  });
  const applied = new Counter({
    name: proxyExtensionMetricNames.toxicsAppliedTotal,
    help: 'Toxics whose toxicity roll hit on a connection, per proxy, toxic and stream (limbo extension).',
    labelNames: ['proxy', 'toxic', 'type', 'stream'] as const,
    registers: [registry],
  });
  return {
    received: (p, d, bytes) => {
      tally(p).received[d] += bytes;
    },
    sent: (p, d, bytes) => {
      tally(p).sent[d] += bytes;
    },
    event: (e) => {
      if (e.type === 'connection_opened') connections.inc({ proxy: e.proxy, event: 'opened' });
      else if (e.type === 'connection_closed') connections.inc({ proxy: e.proxy, event: 'closed' });
      else if (e.type === 'upstream_unreachable')
        connections.inc({ proxy: e.proxy, event: 'upstream_unreachable' });
      else if (e.type === 'toxic_applied')
        applied.inc({
          proxy: e.proxy,
          toxic: e.toxic ?? '',
          type: e.toxicType ?? '',
          stream: e.stream ?? '',
        });
    },
  };
}
