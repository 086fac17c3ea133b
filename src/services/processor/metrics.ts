// The processor's metrics (DESIGN.md §2), registered on the instance's own registry.
import { Counter, Gauge, type Registry } from 'prom-client';
import { metricNames as m } from '../../protocol/names.js';

export type ProcessorMetrics = ReturnType<typeof createProcessorMetrics>;

export function createProcessorMetrics(registry: Registry) {
  const registers = [registry];
  return {
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
    }),
  };
}
