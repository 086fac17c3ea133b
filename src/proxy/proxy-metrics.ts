// Per-proxy byte counters, modelled on the real server's: counted per chunk as it moves,
// so a scrape during a fault shows whether live traffic met it.
import { Counter, type Registry } from 'prom-client';
import { toxiproxyMetricNames } from '../protocol/names.js';
import type { Proxy } from './proxy.js';
import type { Direction } from './toxic.js';

export interface ProxyMetrics {
  received: (proxy: Proxy, direction: Direction, bytes: number) => void;
  sent: (proxy: Proxy, direction: Direction, bytes: number) => void;
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
  const labels = (p: Proxy, direction: Direction) => ({
    direction,
    listener: p.listen,
    proxy: p.name,
    upstream: p.upstream,
  });
  return {
    received: (p, d, bytes) => received.inc(labels(p, d), bytes),
    sent: (p, d, bytes) => sent.inc(labels(p, d), bytes),
  };
}
