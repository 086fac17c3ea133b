// Log: the durable log server and its cluster controller. Append rate and latency show
// whether the log kept up; controller leader changes (by reason) explain the processors'
// leadership changes on the processors dashboard.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { RowBuilder } from '@grafana/grafana-foundation-sdk/dashboard';
import { metricNames as m } from '../../src/protocol/names.js';
import { limboDashboard, rateWindow, sel, statPanel, timeSeriesPanel } from './common.js';

const appendBuckets = `${m.logAppendDurationSeconds}_bucket`;

export function logDashboard(): Dashboard {
  return limboDashboard('limbo-log', 'limbo / log', `${m.logAppendDurationSeconds}_count`)
    .description(
      'Log server and controller: append rate, append latency quantiles, leader changes by reason.',
    )
    .withRow(new RowBuilder('Appends'))
    .withPanel(
      statPanel({
        title: 'Appends per second',
        description: 'Durable appends per second, all partitions.',
        unit: 'ops',
        queries: [{ expr: `sum(rate(${m.logAppendsTotal}${sel()}[${rateWindow}]))`, legend: 'appends/s' }],
      }),
    )
    .withPanel(
      statPanel({
        title: 'Append p99',
        description: '99th percentile of durable append latency.',
        unit: 's',
        queries: [
          {
            expr: `histogram_quantile(0.99, sum by (le) (rate(${appendBuckets}${sel()}[${rateWindow}])))`,
            legend: 'p99',
          },
        ],
      }),
    )
    .withPanel(
      statPanel({
        title: 'Leader changes',
        description: 'Leader changes decided by the controller in the dashboard time range.',
        unit: 'short',
        queries: [
          {
            expr: `sum(increase(${m.controllerLeaderChangesTotal}${sel()}[$__range]))`,
            legend: 'changes',
          },
        ],
        width: 12,
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'Append rate by partition',
        description: 'Durable appends per second, per partition.',
        unit: 'ops',
        queries: [
          {
            expr: `sum by (partition) (rate(${m.logAppendsTotal}${sel()}[${rateWindow}]))`,
            legend: 'p{{partition}}',
          },
        ],
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'Append latency',
        description: 'Durable append latency quantiles from the histogram.',
        unit: 's',
        queries: [0.5, 0.9, 0.99].map((q) => ({
          expr: `histogram_quantile(${q}, sum by (le) (rate(${appendBuckets}${sel()}[${rateWindow}])))`,
          legend: `p${q * 100}`,
        })),
      }),
    )
    .withRow(new RowBuilder('Controller'))
    .withPanel(
      timeSeriesPanel({
        title: 'Leader changes by reason',
        description: 'Partition leader changes decided by the controller: failure, transfer, startup.',
        unit: 'short',
        queries: [
          {
            expr: `sum by (partition, reason) (increase(${m.controllerLeaderChangesTotal}${sel()}[${rateWindow}]))`,
            legend: 'p{{partition}} {{reason}}',
          },
        ],
        width: 24,
      }),
    )
    .build();
}
