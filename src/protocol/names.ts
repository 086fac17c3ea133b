// Names that are public API (docs/architecture.md#telemetry-contract): suites, dashboards and
// alert rules depend on them. Renaming one breaks every user's dashboards and suites.

/** The metric every Node service exports with its process's start time (prom-client's default). */
export const processStartMetric = 'process_start_time_seconds';

export const metricNames = {
  ingressRequestsTotal: 'limbo_ingress_requests_total',
  ingressPendingRequests: 'limbo_ingress_pending_requests',
  ingressOldestPendingSeconds: 'limbo_ingress_oldest_pending_seconds',
  ingressRequestDurationSeconds: 'limbo_ingress_request_duration_seconds',
  ingressRpcAttemptsTotal: 'limbo_ingress_rpc_attempts_total',
  ingressResendsTotal: 'limbo_ingress_resends_total',
  ingressResendingRequests: 'limbo_ingress_resending_requests',
  ingressResentRequestsTotal: 'limbo_ingress_resent_requests_total',
  processorIsLeader: 'limbo_processor_is_leader',
  processorLeaderEpoch: 'limbo_processor_leader_epoch',
  processorLeadershipChangesTotal: 'limbo_processor_leadership_changes_total',
  processorPendingRpcs: 'limbo_processor_pending_rpcs',
  processorRpcsFailedTotal: 'limbo_processor_rpcs_failed_total',
  processorAppliedLsn: 'limbo_processor_applied_lsn',
  processorStaleProposalsDroppedTotal: 'limbo_processor_stale_proposals_dropped_total',
  processorInvocations: 'limbo_processor_invocations',
  logAppendsTotal: 'limbo_log_appends_total',
  logAppendDurationSeconds: 'limbo_log_append_duration_seconds',
  controllerLeaderChangesTotal: 'limbo_controller_leader_changes_total',
  faultActive: 'limbo_fault_active',
  workloadPending: 'limbo_workload_pending',
} as const;

/**
 * The reference cluster's own signals of the paths that faults inside a service reach (the log
 * refusing appends, the controller's table updates, a step of a leadership change, the fault
 * hooks themselves): reference-only, so not among the canonical signals other targets map.
 */
export const referenceMetricNames = {
  logAppendErrorsTotal: 'limbo_log_append_errors_total',
  controllerTableVersion: 'limbo_controller_table_version',
  controllerTableUpdatesHeldTotal: 'limbo_controller_table_updates_held_total',
  ingressTableVersion: 'limbo_ingress_table_version',
  ingressStaleTablesTotal: 'limbo_ingress_stale_tables_total',
  processorLeadershipStepFailuresTotal: 'limbo_processor_leadership_step_failures_total',
  faultHookActive: 'limbo_fault_hook_active',
  faultHookHitsTotal: 'limbo_fault_hook_hits_total',
  clockOffsetSeconds: 'limbo_clock_offset_seconds',
} as const;

/**
 * The embedded Toxiproxy server's counters: bytes named like the real server's; connections and
 * toxics applied are limbo's extension (the real server has no such counters).
 */
export const toxiproxyMetricNames = {
  receivedBytesTotal: 'toxiproxy_proxy_received_bytes_total',
  sentBytesTotal: 'toxiproxy_proxy_sent_bytes_total',
  connectionsTotal: 'limbo_proxy_connections_total',
  toxicsAppliedTotal: 'limbo_proxy_toxics_applied_total',
} as const;

export const spanAttributes = {
  invocationId: 'limbo.invocation.id',
  partition: 'limbo.partition',
  leaderEpoch: 'limbo.leader.epoch',
  attempt: 'limbo.attempt',
  resendReason: 'limbo.resend.reason',
  // Client ops, the log server, the open-span ledger.
  node: 'limbo.node',
  lsn: 'limbo.lsn',
  opKind: 'limbo.op.kind',
  opId: 'limbo.op.id',
  opOutcome: 'limbo.op.outcome',
  opErrorCode: 'limbo.op.error.code',
  clientProcess: 'limbo.client.process',
  logRecords: 'limbo.log.records',
  logFromLsn: 'limbo.log.from_lsn',
} as const;

/** The service name of the workload's client spans (one per op, the root of its trace). */
export const clientServiceName = 'client';

export type ResendReason = 'timeout' | 'connection_lost' | 'not_leader' | 'lost_leadership' | 'unavailable';

export const serviceRoles = ['log', 'processor', 'ingress'] as const;
export type ServiceRole = (typeof serviceRoles)[number];

/** The ingress ↔ processor protocol: `rpc` (request/response with resends, the fix) or `legacy` (fire-and-forget notifications, the seed bug). */
export type Protocol = 'rpc' | 'legacy';

/** The reference ingress's HTTP headers: the invocation id (client-chosen or assigned) and the trace id of an answer. */
export const INVOCATION_ID_HEADER = 'x-limbo-invocation-id';
export const TRACE_ID_HEADER = 'x-limbo-trace-id';
