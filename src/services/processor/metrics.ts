// The processor's metrics (docs/architecture.md#metrics), registered on the instance's own registry.
import { Counter, Gauge, type Registry } from 'prom-client';
import { metricNames as m, referenceMetricNames } from '../../protocol/names.js';

export type ProcessorMetrics = ReturnType<typeof createProcessorMetrics>;

/**
 * What a replica reports on the gauges that move with every applied record and every request
 * (applied LSN, invocations by status, pending RPCs): read when the registry is collected, so
 * the hot path only keeps its own numbers.
 */
export interface ReplicaReadings {
  readonly partition: string;
  appliedLsn(): number;
  invoked(): number;
  completed(): number;
  pendingRpcs(): number;
}

export function createProcessorMetrics(registry: Registry) {
  const registers = [registry];
  /** The replicas hosted now; a replica that stops leaves its last reading on the gauges. */
  const replicas = new Set<ReplicaReadings>();
  return {
    replicas,
    isLeader: new Gauge({
      name: m.processorIsLeader,
      help: '1 on the replica that leads the partition',
      labelNames: ['partition'],
      registers,
    }),
    leaderEpoch: new Gauge({
      name: m.processorLeaderEpoch,
      help: 'Leader epoch this replica has applied',
      labelNames: ['partition'],
      registers,
    }),
    leadershipChanges: new Counter({
      name: m.processorLeadershipChangesTotal,
      help: 'Leadership transitions of this replica',
      labelNames: ['partition', 'transition'],
      registers,
    }),
    pendingRpcs: new Gauge({
      name: m.processorPendingRpcs,
      help: 'Ingress requests waiting on this leader',
      labelNames: ['partition'],
      registers,
      collect() {
        for (const r of replicas) this.set({ partition: r.partition }, r.pendingRpcs());
      },
    }),
    leadershipStepFailures: new Counter({
      name: referenceMetricNames.processorLeadershipStepFailuresTotal,
      help: 'Steps of a leadership change that failed (claim, announce, catch-up, resume), each retried',
      labelNames: ['partition', 'step'],
      registers,
    }),
    repeatedRecords: new Counter({
      name: referenceMetricNames.processorRepeatedRecordsTotal,
      help: 'Invoke and End records applied for an invocation the log already held them for (an append that went through although answered failed or lost, then proposed again): kept once',
      labelNames: ['partition', 'record'],
      registers,
    }),
    rpcsFailed: new Counter({
      name: m.processorRpcsFailedTotal,
      help: 'Ingress requests answered with an error',
      labelNames: ['partition', 'reason'],
      registers,
    }),
    appliedLsn: new Gauge({
      name: m.processorAppliedLsn,
      help: 'Last applied log position',
      labelNames: ['partition'],
      registers,
      collect() {
        for (const r of replicas) this.set({ partition: r.partition }, r.appliedLsn());
      },
    }),
    staleProposalsDropped: new Counter({
      name: m.processorStaleProposalsDroppedTotal,
      help: 'Records dropped on apply because their epoch was not the announced one',
      labelNames: ['partition'],
      registers,
    }),
    invocations: new Gauge({
      name: m.processorInvocations,
      help: 'Invocations held in state by status',
      labelNames: ['partition', 'status'],
      registers,
      collect() {
        for (const r of replicas) {
          this.set({ partition: r.partition, status: 'invoked' }, r.invoked());
          this.set({ partition: r.partition, status: 'completed' }, r.completed());
        }
      },
    }),
  };
}
