// Overview: what clients see. Is anyone waiting, for how long, and what the ingress does
// about it (resends by reason, attempts by result). A hung client shows as pending > 0
// with an oldest-pending age that only grows, usually inside a fault window.
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { RowBuilder } from '@grafana/grafana-foundation-sdk/dashboard';
import { metricNames as m } from '../../src/protocol/names.js';
import { limboDashboard, rateWindow, sel, statPanel, timeSeriesPanel } from './common.js';

const latency = `${m.ingressRequestDurationSeconds}_bucket`;

export function overviewDashboard(): Dashboard {
  return limboDashboard('limbo-overview', 'limbo / overview', m.ingressPendingRequests)
    .description(
      'Clients and ingress: pending requests, their age, rates, latency, resends and RPC attempts.',
    )
    .withRow(new RowBuilder('Right now'))
    .withPanel(
      statPanel({
        title: 'Pending requests',
        description: 'Client requests the ingress has not answered yet, all kinds.',
        unit: 'short',
        queries: [{ expr: `sum(${m.ingressPendingRequests}${sel()})`, legend: 'pending' }],
      }),
    )
    .withPanel(
      statPanel({
        title: 'Oldest pending age',
        description: 'Age of the oldest unanswered client request on any ingress.',
        unit: 's',
        queries: [{ expr: `max(${m.ingressOldestPendingSeconds}${sel()})`, legend: 'oldest' }],
      }),
    )
    .withPanel(
      statPanel({
        title: 'Workload ops in flight',
        description: "The runner's view: client operations invoked and not yet ended.",
        unit: 'short',
        queries: [{ expr: `sum(${m.workloadPending})`, legend: 'in flight' }],
      }),
    )
    .withPanel(
      statPanel({
        title: 'Request rate',
        description: 'Client requests finished per second, all kinds and outcomes.',
        unit: 'reqps',
        queries: [
          { expr: `sum(rate(${m.ingressRequestsTotal}${sel()}[${rateWindow}]))`, legend: 'requests/s' },
        ],
      }),
    )
    .withRow(new RowBuilder('Waiting clients'))
    .withPanel(
      timeSeriesPanel({
        title: 'Pending requests by kind',
        description:
          'Unanswered client requests per ingress and request kind. Should drain to 0 after a heal.',
        unit: 'short',
        queries: [
          {
            expr: `sum by (service, kind) (${m.ingressPendingRequests}${sel()})`,
            legend: '{{service}} {{kind}}',
          },
          { expr: `sum(${m.workloadPending})`, legend: 'runner: ops in flight' },
        ],
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'Oldest pending age',
        description:
          'Age of the oldest unanswered request per ingress: a line that only grows is a hung client.',
        unit: 's',
        queries: [
          {
            expr: `max by (service) (${m.ingressOldestPendingSeconds}${sel()})`,
            legend: '{{service}}',
          },
        ],
      }),
    )
    .withRow(new RowBuilder('Requests'))
    .withPanel(
      timeSeriesPanel({
        title: 'Request rate by kind and outcome',
        description: 'Client requests finished per second.',
        unit: 'reqps',
        queries: [
          {
            expr: `sum by (kind, outcome) (rate(${m.ingressRequestsTotal}${sel()}[${rateWindow}]))`,
            legend: '{{kind}} {{outcome}}',
          },
        ],
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'Request latency by kind and outcome',
        description: 'Client-visible latency, p50 and p99, from the request duration histogram.',
        unit: 's',
        queries: [0.5, 0.99].map((q) => ({
          expr: `histogram_quantile(${q}, sum by (kind, outcome, le) (rate(${latency}${sel()}[${rateWindow}])))`,
          legend: `p${q * 100} {{kind}} {{outcome}}`,
        })),
      }),
    )
    .withRow(new RowBuilder('Ingress → processors'))
    .withPanel(
      timeSeriesPanel({
        title: 'Resends by reason',
        description:
          'Requests sent again to a processor: timeout, connection_lost, not_leader, lost_leadership, unavailable.',
        unit: 'ops',
        queries: [
          {
            expr: `sum by (reason) (rate(${m.ingressResendsTotal}${sel()}[${rateWindow}]))`,
            legend: '{{reason}}',
          },
        ],
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'Resends per resending request',
        description:
          'Per partition: resends per second divided by the requests resending to it (those resending plus those that began) — what resendRateBounded bounds. A backoff keeps it near 3/s; a storm is 20/s.',
        unit: 'ops',
        queries: [
          {
            expr: `sum by (partition) (rate(${m.ingressResendsTotal}${sel()}[${rateWindow}])) / clamp_min(sum by (partition) (${m.ingressResendingRequests}${sel()}) + sum by (partition) (increase(${m.ingressResentRequestsTotal}${sel()}[${rateWindow}])), 1)`,
            legend: 'partition {{partition}}',
          },
        ],
      }),
    )
    .withPanel(
      timeSeriesPanel({
        title: 'RPC attempts by result',
        description: 'Every attempt from an ingress to a processor, by RPC and result.',
        unit: 'ops',
        queries: [
          {
            expr: `sum by (rpc, result) (rate(${m.ingressRpcAttemptsTotal}${sel()}[${rateWindow}]))`,
            legend: '{{rpc}} {{result}}',
          },
        ],
      }),
    )
    .build();
}
