// Per-proxy byte counters, modelled on the real server's: counted per chunk as it moves,
// so a scrape during a fault shows whether live traffic met it. Beyond 2.12 (an extension):
// connections opened and closed, and toxics applied to a connection, per proxy.
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

export function createProxyMetrics(registry: Registry): ProxyMetrics {
  const labelNames = ['direction', 'listener', 'proxy', 'upstream'] as const;
  const received = new Counter({
    name: toxiproxyMetricNames.receivedBytesTotal,
    help: 'Bytes read from a proxied connection, per proxy and direction.',
    labelNames,
    registers: [registry],
  });
  const sent = new Counter({
    name: toxiproxyMetricNames.sentBytesTotal,
    help: 'Bytes written to a proxied connection, per proxy and direction.',
    labelNames,
    registers: [registry],
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
  const labels = (p: Proxy, direction: Direction) => ({
    direction,
    listener: p.listen,
    proxy: p.name,
    upstream: p.upstream,
  });
  return {
    received: (p, d, bytes) => received.inc(labels(p, d), bytes),
    sent: (p, d, bytes) => sent.inc(labels(p, d), bytes),
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
