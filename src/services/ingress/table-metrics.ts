// The ingress's view of the partition table as metrics: the version it routes by (beside the
// controller's limbo_controller_table_version it is the table lag) and the tables it set aside
// because a newer one had come first (updates that arrived out of order).
import { Counter, Gauge, type Registry } from 'prom-client';
import { referenceMetricNames as m } from '../../protocol/names.js';

export interface TableMetrics {
  /** The table it routes by now. */
  applied(version: number): void;
  /** A table older than the one it has arrived and was ignored. */
  stale(): void;
}

export function createTableMetrics(registry: Registry): TableMetrics {
  const version = new Gauge({
    name: m.ingressTableVersion,
    help: 'Version of the partition table this ingress routes by',
    registers: [registry],
  });
  const stale = new Counter({
    name: m.ingressStaleTablesTotal,
    help: 'Partition tables ignored because a newer one had already arrived',
    registers: [registry],
  });
  stale.inc(0);
  return { applied: (v) => version.set(v), stale: () => stale.inc() };
}
