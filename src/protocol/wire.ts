// TypeScript shapes of the messages in limbo.proto, as @grpc/proto-loader decodes them
// with the options in transport/grpc.ts (camelCase fields, uint64 as number, enums as strings,
// bytes as Buffer, defaults filled, the name of the set oneof field in `result`/`kind`).
// Keep this file and limbo.proto in step: it imports nothing.

export interface AppendRequest {
  partition: number;
  records: Buffer[];
}
export interface AppendResponse {
  firstLsn: number;
  lastLsn: number;
}
export interface AppendItem {
  partition: number;
  records: Buffer[];
  traceparent: string;
}
export interface AppendBatchRequest {
  items: AppendItem[];
  /** AppendStream only: the caller's id of the batch, echoed in its response. */
  batchId?: number;
}
export interface AppendResult {
  firstLsn: number;
  lastLsn: number;
  code: number;
  message: string;
}
export interface AppendBatchResponse {
  results: AppendResult[];
  /** AppendStream only: the batch answered. */
  batchId?: number;
}
export interface ReadRequest {
  partition: number;
  fromLsn: number;
  /** Caught up, wait this long after new entries appear and send them together (0/absent: at once). */
  batchDelayMs?: number;
}
export interface LogEntry {
  lsn: number;
  payload: Buffer;
}
export interface ReadResponse {
  entries: LogEntry[];
}
export interface GetTailRequest {
  partition: number;
}
export interface GetTailResponse {
  tailLsn: number;
}

export interface HeartbeatRequest {
  node: string;
  address: string;
  partitions: number[];
}
export interface HeartbeatResponse {
  table: PartitionTable | null;
  failureTimeoutMs: number;
}
export interface WatchPartitionTableRequest {
  watcher: string;
}
export type GetPartitionTableRequest = Record<string, never>;
export interface PartitionAssignment {
  partition: number;
  leaderNode: string;
  epoch: number;
  leaderAddress: string;
}
export interface NodeInfo {
  node: string;
  address: string;
  alive: boolean;
  partitions: number[];
}
export interface PartitionTable {
  version: number;
  numPartitions: number;
  partitions: PartitionAssignment[];
  nodes: NodeInfo[];
}
export interface CompareAndSwapLeaderRequest {
  partition: number;
  expectedEpoch: number;
  leaderNode: string;
}
export interface CompareAndSwapLeaderResponse {
  ok: boolean;
  epoch: number;
  leaderNode: string;
}
export interface TransferLeadershipRequest {
  partition: number;
  node: string;
}
export interface TransferLeadershipResponse {
  assignment: PartitionAssignment | null;
}

export type ReplyOn = 'REPLY_ON_UNSPECIFIED' | 'SUBMITTED' | 'OUTPUT';
export type ErrorCode = 'ERROR_CODE_UNSPECIFIED' | 'NOT_LEADER' | 'LOST_LEADERSHIP' | 'INTERNAL';

export interface SubmitRequest {
  requestId: string;
  invocationId: string;
  partition: number;
  service: string;
  key: string;
  handler: string;
  payload: Buffer;
  idempotencyKey: string;
  replyOn: ReplyOn;
  traceparent: string;
}
export interface Submitted {
  invocationId: string;
  isNew: boolean;
}
export interface Output {
  invocationId: string;
  success: boolean;
  value: Buffer;
  failure: string;
  expiresAtMs: number;
}
export interface RpcError {
  code: ErrorCode;
  message: string;
  leaderNode: string;
  leaderEpoch: number;
}
export type SubmitResponse =
  | { result: 'submitted'; submitted: Submitted }
  | { result: 'output'; output: Output }
  | { result: 'error'; error: RpcError };

export interface GetOutputRequest {
  requestId: string;
  invocationId: string;
  partition: number;
  block: boolean;
}
export type GetOutputResponse =
  | { result: 'notFound'; notFound: Record<string, never> }
  | { result: 'pending'; pending: Record<string, never> }
  | { result: 'output'; output: Output }
  | { result: 'error'; error: RpcError };

/** Processor.Calls: one call on the stream, or the withdrawal of one. */
export type ProcessorCall =
  | { callId: number; call: 'submit'; submit: SubmitRequest }
  | { callId: number; call: 'getOutput'; getOutput: GetOutputRequest }
  | { callId: number; call: 'cancel'; cancel: Record<string, never> };
export interface CallStatus {
  code: number;
  message: string;
}
export type ProcessorReply =
  | { callId: number; reply: 'submit'; submit: SubmitResponse }
  | { callId: number; reply: 'getOutput'; getOutput: GetOutputResponse }
  | { callId: number; reply: 'status'; status: CallStatus };

export interface SubscribeRequest {
  ingressId: string;
}
export type IngressNotification =
  | { requestId: string; kind: 'submitNotification'; submitNotification: Submitted }
  | { requestId: string; kind: 'invocationResponse'; invocationResponse: Output };
