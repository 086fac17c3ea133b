// The log server's metrics, in the service instance's own registry. Public names come from
// protocol/names.ts; the extras are for dashboards of the log server itself.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { metricNames, referenceMetricNames } from '../../protocol/names.js';
import type { LeaderChangeReason } from './controller.js';
import type { PartitionLogHooks } from './partition-log.js';

export interface LogMetrics {
  partitionHooks(partition: number): PartitionLogHooks;
  /** An append answered with an error (its gRPC status name: unavailable, internal, …). */
  appendFailed(partition: number, code: string): void;
  tableVersion(version: number): void;
  /** A table update to a watcher held back by the controller.table-updates fault hook. */
  tableUpdateHeld(how: string): void;
  leaderChanged(partition: number, reason: LeaderChangeReason): void;
  liveNodes(count: number): void;
}

export function createLogMetrics(registry: Registry): LogMetrics {
  const appends = new Counter({
    name: metricNames.logAppendsTotal,
    help: 'Records appended durably, by partition.',
    labelNames: ['partition'],
    registers: [registry],
  });
  const appendDuration = new Histogram({
    name: metricNames.logAppendDurationSeconds,
    help: 'Durable append latency: from the append arriving to its fsync completing.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const fsyncs = new Counter({
    name: 'limbo_log_fsyncs_total',
    help: 'Durable (O_DSYNC) writes on partition files: one per group commit.',
    labelNames: ['partition'],
    registers: [registry],
  });
  const tail = new Gauge({
    name: 'limbo_log_tail_lsn',
    help: 'Last durable LSN of a partition.',
    labelNames: ['partition'],
    registers: [registry],
  });
  const leaderChanges = new Counter({
    name: metricNames.controllerLeaderChangesTotal,
    help: 'Leadership moves made by the controller, by partition and reason.',
    labelNames: ['partition', 'reason'],
    registers: [registry],
  });
  const nodesAlive = new Gauge({
    name: 'limbo_controller_nodes_alive',
    help: 'Processor nodes whose heartbeats arrive within the failure timeout.',
    registers: [registry],
  });
  const appendErrors = new Counter({
    name: referenceMetricNames.logAppendErrorsTotal,
    help: 'Appends answered with an error (nothing written), by partition and gRPC status',
    labelNames: ['partition', 'code'],
    registers: [registry],
  });
  const recoveries = new Counter({
    name: referenceMetricNames.logRecoveriesTotal,
    help: 'Partitions recovered from their file after a failed write',
    labelNames: ['partition'],
    registers: [registry],
  });
  const recoveredRecords = new Counter({
    name: referenceMetricNames.logRecoveredRecordsTotal,
    help: 'Records a failed write left on disk, found when the partition recovered (appends answered failed that are in the log)',
    labelNames: ['partition'],
    registers: [registry],
  });
  const tableVersion = new Gauge({
    name: referenceMetricNames.controllerTableVersion,
    help: 'Version of the partition table the controller publishes (watchers compare theirs)',
    registers: [registry],
  });
  const tableHeld = new Counter({
    name: referenceMetricNames.controllerTableUpdatesHeldTotal,
    help: 'Table updates to watchers delayed, dropped or reordered (the controller.table-updates fault hook)',
    labelNames: ['how'],
    registers: [registry],
  });
  return {
    appendFailed: (partition, code) => appendErrors.inc({ partition: String(partition), code }),
    tableVersion: (version) => tableVersion.set(version),
    tableUpdateHeld: (how) => tableHeld.inc({ how }),
    partitionHooks(partition) {
      // The labelled children, looked up once: a lookup hashes the labels on every call.
      const labels = { partition: String(partition) };
      const appendsOf = appends.labels(labels);
      const fsyncsOf = fsyncs.labels(labels);
      const tailOf = tail.labels(labels);
      appendsOf.inc(0);
      fsyncsOf.inc(0);
      appendErrors.inc({ partition: String(partition), code: 'unavailable' }, 0);
      return {
        onAppended: (records, durationMs) => {
          appendsOf.inc(records);
          appendDuration.observe(durationMs / 1000);
        },
        onFsync: () => fsyncsOf.inc(),
        onTail: (lsn) => tailOf.set(lsn),
        onRecovered: (records) => {
          recoveries.inc(labels);
          recoveredRecords.inc(labels, records);
        },
      };
    },
    leaderChanged: (partition, reason) => leaderChanges.inc({ partition: String(partition), reason }),
    liveNodes: (count) => nodesAlive.set(count),
  };
}
