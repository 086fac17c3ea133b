// Processors: per partition, who leads, at which epoch, how far each replica has
// applied, what waits on the leader, and the fencing at work (stale proposals dropped,
// RPCs refused). Leadership changes line up with the fault windows drawn over them.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import {
  QueryVariableBuilder,
  RowBuilder,
  VariableRefresh,
  VariableSort,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { metricNames as m } from '../../src/protocol/names.js';
import { datasource, limboDashboard, rateWindow, sel, timeSeriesPanel } from './common.js';

const part = 'partition=~"$partition"';

export function processorsDashboard(): Dashboard {
  return limboDashboard('limbo-processors', 'limbo / processors', m.processorIsLeader)
    .description(
      'Partition processors per partition: leader, epoch, applied LSN, pending RPCs, stale proposals, invocations, leadership changes.',
    )
    .withVariable(
      new QueryVariableBuilder('partition')
        .label('Partition')
        .datasource(datasource)
        .query(`label_values(${m.processorIsLeader}, partition)`)
        .definition(`label_values(${m.processorIsLeader}, partition)`)
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .sort(VariableSort.NumericalAsc)
        .multi(true)
        .includeAll(true)
        .allValue('.*'),
    )
    .withRow(new RowBuilder('Leadership'))
    .withPanel(
      timeSeriesPanel({
        title: 'Leaders per partition',
        description: 'Replicas that believe they lead each partition: 1 is healthy, 0 is no leader.',
        unit: 'short',
        queries: [
          {
            expr: `sum by (partition) (${m.processorIsLeader}${sel(part)})`,
            legend: 'p{{partition}}',
          },
        ],
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'Leader by replica',
        description: '1 on the replica that leads the partition.',
        unit: 'short',
        queries: [
          {
            expr: `max by (partition, service) (${m.processorIsLeader}${sel(part)})`,
            legend: 'p{{partition}} {{service}}',
          },
        ],
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'Leader epoch',
        description: 'Epoch each replica has applied; a step is a new leader.',
        unit: 'short',
        queries: [
          {
            expr: `max by (partition, service) (${m.processorLeaderEpoch}${sel(part)})`,
            legend: 'p{{partition}} {{service}}',
          },
        ],
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'Leadership changes',
        description: 'Became leader / stepped down, per partition.',
        unit: 'short',
        queries: [
          {
            expr: `sum by (partition, transition) (increase(${m.processorLeadershipChangesTotal}${sel(part)}[${rateWindow}]))`,
            legend: 'p{{partition}} {{transition}}',
          },
        ],
      }),
    )
    .withRow(new RowBuilder('Progress and waiting'))
    .withPanel(
      timeSeriesPanel({
        title: 'Applied LSN',
        description: 'Last applied log position per replica: followers should track the leader.',
        unit: 'short',
        queries: [
          {
            expr: `max by (partition, service) (${m.processorAppliedLsn}${sel(part)})`,
            legend: 'p{{partition}} {{service}}',
          },
        ],
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'Pending RPCs',
        description: 'Ingress requests waiting on this leader for their result.',
        unit: 'short',
        queries: [
          {
            expr: `sum by (partition, service) (${m.processorPendingRpcs}${sel(part)})`,
            legend: 'p{{partition}} {{service}}',
          },
        ],
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'Invocations by status',
        description: 'Invocations held in state (the most any replica holds), invoked vs completed.',
        unit: 'short',
        queries: [
          {
            expr: `max by (partition, status) (${m.processorInvocations}${sel(part)})`,
            legend: 'p{{partition}} {{status}}',
          },
        ],
      }),
    )
    .withRow(new RowBuilder('Fencing'))
    .withPanel(
      timeSeriesPanel({
        title: 'Stale proposals dropped',
        description: 'Records dropped on apply because their epoch was not the announced one.',
        unit: 'ops',
        queries: [
          {
            expr: `sum by (partition) (rate(${m.processorStaleProposalsDroppedTotal}${sel(part)}[${rateWindow}]))`,
            legend: 'p{{partition}}',
          },
        ],
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'RPCs refused by reason',
        description: 'Ingress requests answered with an error: not_leader, lost_leadership.',
        unit: 'ops',
        queries: [
          {
            expr: `sum by (partition, reason) (rate(${m.processorRpcsFailedTotal}${sel(part)}[${rateWindow}]))`,
            legend: 'p{{partition}} {{reason}}',
          },
        ],
      }),
    )
    .build();
}
