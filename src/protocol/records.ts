// Log record types of a partition. The log server stores opaque bytes; processors (and,
// in the legacy protocol, the ingress) encode these records as JSON and every replica
// applies them in LSN order to the same deterministic state machine.
//
// Every record a leader proposes carries (epoch, seq). On apply, a proposal whose epoch
// is older than the last announced one is dropped, so a deposed leader cannot write.
import { LimboError } from '../util/errors.js';

export interface Proposal {
  /** Leader epoch of the proposer. */
  epoch: number;
  /** Increases per proposal within an epoch. */
  seq: number;
}

export interface AnnounceLeaderRecord {
  type: 'announce_leader';
  node: string;
  epoch: number;
}

export interface InvokeRecord {
  type: 'invoke';
  /** Absent when the ingress appended it itself (legacy protocol). */
  proposal?: Proposal;
  invocationId: string;
  service: string;
  key: string;
  handler: string;
  /** JSON text of the request body. */
  payload: string;
  idempotencyKey?: string;
  /** W3C traceparent of the submitting span, so every leader's work joins one trace. */
  traceparent?: string;
  /** Legacy protocol: where to push the SubmitNotification / InvocationResponse. */
  ingressId?: string;
  requestId?: string;
  /** Milliseconds since the epoch at the proposer; informational only, never applied. */
  createdAtMs: number;
}

export interface StateUpdate {
  key: string;
  /** JSON text, or null to delete. */
  value: string | null;
}

export interface EndRecord {
  type: 'end';
  proposal: Proposal;
  invocationId: string;
  success: boolean;
  /** JSON text of the result when success. */
  value: string;
  failure: string;
  stateUpdates: StateUpdate[];
}

export type LogRecord = AnnounceLeaderRecord | InvokeRecord | EndRecord;

export function encodeRecord(record: LogRecord): Buffer {
  return Buffer.from(JSON.stringify(record), 'utf8');
}

export class RecordDecodeError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_RECORD_DECODE', message, options);
  }
}

export function decodeRecord(bytes: Buffer): LogRecord {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new RecordDecodeError(`record is not JSON: ${(e as Error).message}`);
  }
  const type = (value as { type?: unknown } | null)?.type;
  if (type !== 'announce_leader' && type !== 'invoke' && type !== 'end') {
    throw new RecordDecodeError(`unknown record type ${JSON.stringify(type)}`);
  }
  return value as LogRecord;
}
