// Names that are public API (docs/architecture.md#telemetry-contract): suites, dashboards and
// alert rules depend on them. Renaming one breaks every user's dashboards and suites.
import type { LogRecord } from './records.js';

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
  logRecoveriesTotal: 'limbo_log_recoveries_total',
  logRecoveredRecordsTotal: 'limbo_log_recovered_records_total',
  controllerTableVersion: 'limbo_controller_table_version',
  controllerTableUpdatesHeldTotal: 'limbo_controller_table_updates_held_total',
  ingressTableVersion: 'limbo_ingress_table_version',
  ingressStaleTablesTotal: 'limbo_ingress_stale_tables_total',
  ingressResponseWriteWaitsTotal: 'limbo_ingress_response_write_waits_total',
  ingressResponsesWaitingForClient: 'limbo_ingress_responses_waiting_for_client',
  processorLeadershipStepFailuresTotal: 'limbo_processor_leadership_step_failures_total',
  processorRepeatedRecordsTotal: 'limbo_processor_repeated_records_total',
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

// ------------------------------------------------------------------ spans
//
// Every span name and span attribute key that limbo's processes put on the wire, spelled once.
// Services, the workload and the runner build their spans from these tables; checks, diagnosis,
// the report and suites read spans by them. test/protocol/span-names.test.ts fails when a span
// is started with a name not built here, or an attribute key is spelled outside this file.
//
//   client op ─▶ ingress request ─▶ ingress attempt ─▶ processor submit/get_output
//                                                        ├▶ log append <record> ─▶ log append (log server)
//                                                        ├▶ apply invoke / apply end
//                                                        └▶ invoke <service>/<handler> ─▶ log append end …

/**
 * The span names, by what the span covers and who starts it. A family whose name carries a
 * part that varies (an op kind, a record type) is a builder: `spanNames.apply('end')` is
 * `'apply end'`; its type is the exact name, so a reader can compare with it.
 */
export const spanNames = {
  /** workload: one client op, from its send to its answer, the root of its trace (service `client`, CLIENT): `client call`, `client counterAdd`, … */
  clientOp: <K extends string>(opKind: K) => `client ${opKind}` as const,
  /** ingress: one client HTTP request, from its arrival to its answer (SERVER): `ingress call`, `ingress send`, `ingress attach`, `ingress output`. */
  ingressRequest: <K extends string>(requestKind: K) => `ingress ${requestKind}` as const,
  /** ingress: one attempt of an RPC to a partition's leader; every resend is another (CLIENT): `ingress submit attempt`, `ingress get_output attempt`. */
  ingressAttempt: <R extends IngressRpc>(rpc: R) => `ingress ${rpc} attempt` as const,
  /** processor: one Submit RPC a replica answered, from its arrival to its reply (SERVER). */
  processorSubmit: 'processor submit',
  /** processor: one GetOutput RPC a replica answered, a long poll included (SERVER). */
  processorGetOutput: 'processor get_output',
  /** processor (leader): one run of an invocation's handler, all its attempts, until its End is appended: `invoke Counter/add`. */
  invoke: <S extends string, H extends string>(service: S, handler: H) =>
    `invoke ${service}/${handler}` as const,
  /** processor (leader): one append of a record it proposes, the call to the log until its ack: `log append invoke`, `log append end`, `log append announce_leader`. */
  processorAppend: <T extends LogRecordType>(recordType: T) => `log append ${recordType}` as const,
  /** processor (leader): an Invoke or End record applied from the log (ended at once; its time is when): `apply invoke`, `apply end`. */
  apply: <T extends LogRecordType>(recordType: T) => `apply ${recordType}` as const,
  /** log server: one Append, until its records are durable or it failed (SERVER, child of the processor's append). */
  logAppend: 'log append',
  /** log server: one GetTail call (SERVER). */
  logGetTail: 'log get_tail',
  /** log server: one Read stream, open while a processor tails the partition (SERVER). */
  logRead: 'log read',
  /** log server (controller): a partition's leader epoch changed, on failure, transfer or startup (ended at once). */
  logFenceEpoch: 'log fence epoch',
  /** log server (controller): one compare-and-swap of a partition's leader (SERVER). */
  logFenceCasLeader: 'log fence cas_leader',
  /** log server (controller): one leadership transfer (SERVER). */
  logFenceTransfer: 'log fence transfer',
  /** runner: one fault window, from injection to heal (service `runner`): `fault kill`, `fault latency`, … */
  faultWindow: <F extends string>(fault: F) => `fault ${fault}` as const,
} as const;

/** Any name the table builds (a family's as its template: `apply ${string}`). */
export type SpanName = {
  [K in keyof typeof spanNames]: (typeof spanNames)[K] extends (...args: never[]) => infer N
    ? N
    : (typeof spanNames)[K];
}[keyof typeof spanNames];

/** The RPCs the ingress sends a partition's leader (the variable part of `ingressAttempt`). */
export type IngressRpc = 'submit' | 'get_output';

/** A log record's type (the variable part of `processorAppend` and `apply`). */
export type LogRecordType = LogRecord['type'];

/** The log server's span names (every one starts with `log `, as the processor's appends do too). */
export const logServerSpanNames: readonly string[] = [
  spanNames.logAppend,
  spanNames.logGetTail,
  spanNames.logRead,
  spanNames.logFenceEpoch,
  spanNames.logFenceCasLeader,
  spanNames.logFenceTransfer,
];

/**
 * The families' names read back: the variable part of a name of that family is group 1
 * (`spanNamePatterns.ingressAttempt.exec('ingress submit attempt')[1]` is `submit`).
 */
export const spanNamePatterns = {
  clientOp: /^client (\S+)$/,
  ingressRequest: /^ingress (\S+)$/,
  ingressAttempt: /^ingress (\S+) attempt$/,
  invoke: /^invoke (.+)$/,
  processorAppend: /^log append (\S+)$/,
  apply: /^apply (\S+)$/,
  faultWindow: /^fault (\S+)$/,
} as const satisfies Partial<Record<keyof typeof spanNames, RegExp>>;

/** The span attribute keys, by what the attribute holds and which spans carry it. */
export const spanAttributes = {
  /** The invocation a span works for: client op (once known), ingress request and attempts, processor RPCs, invoke, apply, the processor's appends (not announce_leader). */
  invocationId: 'limbo.invocation.id',
  /** The partition (a number): ingress request and attempts, every processor span, the log server's spans. */
  partition: 'limbo.partition',
  /** A leader epoch: the replica's own on processor spans, the route's on an ingress attempt, the one set on a log fence span. */
  leaderEpoch: 'limbo.leader.epoch',
  /** The attempt's number, 1 for the first: ingress attempt. */
  attempt: 'limbo.attempt',
  /** Why this attempt is a resend (a ResendReason; '' on the first): ingress attempt. */
  resendReason: 'limbo.resend.reason',
  /** The processor address the attempt called: ingress attempt. */
  targetAddress: 'limbo.target.address',
  /** The ingress's request id, the same on every resend of one request: processor submit/get_output. */
  requestId: 'limbo.request.id',
  /** The reply's result (`submitted`, `output`, `pending`, `notFound`, `error`): processor submit/get_output. */
  reply: 'limbo.reply',
  /** How many times the handler ran before its End: invoke. */
  handlerAttempts: 'limbo.handler.attempts',
  /** The request's outcome, as the ingress's request metrics label it: ingress request. */
  outcome: 'limbo.outcome',
  /** The node that served the span: processor RPCs and apply, every log server span. */
  node: 'limbo.node',
  /** A log position: the one applied (apply), the last one appended (the processor's append, log append), the tail (log get_tail), the last one sent (log read). */
  lsn: 'limbo.lsn',
  /** The first log position an append got: log append. */
  lsnFirst: 'limbo.lsn.first',
  /** How many records the append carries: log append. */
  logRecords: 'limbo.log.records',
  /** The position a read starts from: log read. */
  logFromLsn: 'limbo.log.from_lsn',
  /** How many entries a read sent: log read. */
  logEntries: 'limbo.log.entries',
  /** The leader before the change: log fence epoch. */
  fenceFrom: 'limbo.fence.from',
  /** The leader after the step: log fence epoch, cas_leader and transfer. */
  fenceLeader: 'limbo.fence.leader',
  /** Why the leader changed (failure, transfer, startup): log fence epoch. */
  fenceReason: 'limbo.fence.reason',
  /** The node asked to lead: log fence cas_leader and transfer. */
  fenceNode: 'limbo.fence.node',
  /** The epoch the compare-and-swap expected: log fence cas_leader. */
  fenceExpectedEpoch: 'limbo.fence.expected_epoch',
  /** Whether the compare-and-swap won: log fence cas_leader. */
  fenceOk: 'limbo.fence.ok',
  /** The op's kind (call, send, counterAdd, …): client op. */
  opKind: 'limbo.op.kind',
  /** The op's id in the run's history: client op. */
  opId: 'limbo.op.id',
  /** The op's outcome (ok, fail, info): client op. */
  opOutcome: 'limbo.op.outcome',
  /** The error code the op was answered with: client op. */
  opErrorCode: 'limbo.op.error.code',
  /** The workload process (client) that ran the op: client op. */
  clientProcess: 'limbo.client.process',
  /** The fault injected: runner's fault window. */
  fault: 'limbo.fault',
  /** What the fault was injected into: runner's fault window. */
  faultTarget: 'limbo.fault.target',
  /** The run's seed: runner's fault window. */
  seed: 'limbo.seed',
  /** `ledger` on an ended span only the open-span ledger reported (its export was lost): set when the run's spans are collected, read by the report. */
  spanSource: 'limbo.span.source',
  /** The HTTP method (OpenTelemetry's name): ingress request. */
  httpMethod: 'http.request.method',
  /** The request's path (OpenTelemetry's name): ingress request. */
  urlPath: 'url.path',
  /** The HTTP status answered (OpenTelemetry's name): ingress request, client op. */
  httpStatus: 'http.response.status_code',
} as const;

/** The service name of the workload's client spans (one per op, the root of its trace). */
export const clientServiceName = 'client';

/** The service name of the runner's own spans (its fault windows). */
export const runnerServiceName = 'runner';

export type ResendReason = 'timeout' | 'connection_lost' | 'not_leader' | 'lost_leadership' | 'unavailable';

export const serviceRoles = ['log', 'processor', 'ingress'] as const;
export type ServiceRole = (typeof serviceRoles)[number];

/** The ingress ↔ processor protocol: `rpc` (request/response with resends, the fix) or `legacy` (fire-and-forget notifications, the seed bug). */
export type Protocol = 'rpc' | 'legacy';

/** The reference ingress's HTTP headers: the invocation id (client-chosen or assigned) and the trace id of an answer. */
export const INVOCATION_ID_HEADER = 'x-limbo-invocation-id';
export const TRACE_ID_HEADER = 'x-limbo-trace-id';
