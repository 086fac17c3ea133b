// How limbo's canonical signals (docs/architecture.md#metrics) map onto what a Restate 1.7
// node exposes on its fabric port's /metrics — only where the mapping is honest; the rest is labelled
// missing with the reason and where the information can be had instead. Checked against a
// real 3-node cluster by test/targets-restate/cluster.test.ts (every `restate` name here exists).
import { metricNames } from '../../protocol/names.js';

export type SignalMapping =
  | { kind: 'metric'; restate: string; note: string }
  | { kind: 'missing'; note: string }
  /** Not a target's signal: the runner serves it whatever the target. */
  | { kind: 'runner' };

type LimboMetric = (typeof metricNames)[keyof typeof metricNames];

export const restateSignals: Readonly<Record<LimboMetric, SignalMapping>> = {
  [metricNames.ingressRequestsTotal]: {
    kind: 'metric',
    restate: 'restate_ingress_requests_total',
    note: 'labels status (admitted, completed, …), rpc_service, rpc_type; per node',
  },
  [metricNames.ingressPendingRequests]: {
    kind: 'missing',
    note: 'no pending-request gauge; the client history is the source of truth for hangs',
  },
  [metricNames.ingressOldestPendingSeconds]: { kind: 'missing', note: 'from the client history only' },
  [metricNames.ingressRequestDurationSeconds]: {
    kind: 'metric',
    restate: 'restate_ingress_request_duration_seconds',
    note: 'a summary (quantiles), not a histogram: quantiles cannot be aggregated across nodes',
  },
  [metricNames.ingressRpcAttemptsTotal]: {
    kind: 'metric',
    restate: 'restate_invocation_client_requests_total',
    note: 'one per ingress→partition-processor attempt; labels partition_id, status',
  },
  [metricNames.ingressResendsTotal]: {
    kind: 'missing',
    note: 'no resend counter or reason; attempts (restate_invocation_client_requests_total) minus requests approximates it',
  },
  [metricNames.ingressResendingRequests]: {
    kind: 'missing',
    note: 'no per-request resend state; resendRateBounded falls back to the pending requests, which Restate lacks too',
  },
  [metricNames.ingressResentRequestsTotal]: { kind: 'missing', note: 'no per-request resend state' },
  [metricNames.processorIsLeader]: {
    kind: 'missing',
    note: 'restate_num_active_partition_leaders counts leaders per node without a partition label; per partition: restatectl partitions list (MODE), which the leadership observer of the restate target serves under this name',
  },
  [metricNames.processorLeaderEpoch]: {
    kind: 'missing',
    note: 'restatectl partitions list (EPOCH), served under this name by the leadership observer',
  },
  [metricNames.processorLeadershipChangesTotal]: {
    kind: 'missing',
    note: 'derived by the leadership observer from successive restatectl partitions list views (once a second); restate_partition_start_total counts processor starts, not leadership',
  },
  [metricNames.processorPendingRpcs]: { kind: 'missing', note: 'no equivalent' },
  [metricNames.processorRpcsFailedTotal]: {
    kind: 'missing',
    note: 'restate_invocation_client_requests_total has a status label, but not the not_leader / lost_leadership reasons',
  },
  [metricNames.processorAppliedLsn]: {
    kind: 'missing',
    note: 'restatectl partitions list (APPLIED); the metric restate_partition_applied_lsn_lag is a per-node gauge of lag quantiles',
  },
  [metricNames.processorStaleProposalsDroppedTotal]: { kind: 'missing', note: 'no equivalent' },
  [metricNames.processorInvocations]: {
    kind: 'missing',
    note: 'not a metric; the admin SQL introspection (sys_invocation) has it',
  },
  [metricNames.logAppendsTotal]: {
    kind: 'metric',
    restate: 'restate_bifrost_sequencer_committed_records_total',
    note: 'records committed by the sequencers on a node, no partition label',
  },
  [metricNames.logAppendDurationSeconds]: {
    kind: 'metric',
    restate: 'restate_bifrost_sequencer_append_duration_seconds',
    note: 'a summary (quantiles), not a histogram',
  },
  [metricNames.controllerLeaderChangesTotal]: { kind: 'missing', note: 'no equivalent' },
  [metricNames.faultActive]: { kind: 'runner' },
  [metricNames.workloadPending]: { kind: 'runner' },
};

/** Restate metrics without a limbo counterpart that still tell a run's story. */
export const restateExtraSignals: Readonly<Record<string, string>> = {
  restate_num_active_partition_leaders:
    'partitions this node leads (sum over nodes = partitions when healthy)',
  restate_num_partitions: 'partitions in the partition table',
  restate_partition_applied_lsn_lag: 'how far replicas trail the log (quantiles per node)',
  restate_failure_detector_nodes_total:
    'nodes per failure-detector state (alive, suspect, failing_over, dead)',
};
