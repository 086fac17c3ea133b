// Errors of the log server that callers branch on, each with a stable `code` and the gRPC
// status it travels as, so a client sees INVALID_ARGUMENT for bad input and the server
// keeps serving.
import { grpc } from '../../transport/grpc.js';
import { LimboError, messageOf } from '../../util/errors.js';

export type LogErrorCode =
  | 'E_BAD_REQUEST'
  | 'E_UNKNOWN_PARTITION'
  | 'E_RECORD_TOO_LARGE'
  | 'E_EMPTY_APPEND'
  | 'E_OVERLOADED'
  | 'E_LOG_FAILED'
  | 'E_UNAVAILABLE'
  | 'E_STOPPED'
  | 'E_NODE_NOT_ALIVE'
  | 'E_NODE_NOT_HOSTING'
  | 'E_DATA_DIR_LOCKED';

const statusOf: Record<LogErrorCode, grpc.status> = {
  E_BAD_REQUEST: grpc.status.INVALID_ARGUMENT,
  E_UNKNOWN_PARTITION: grpc.status.INVALID_ARGUMENT,
  E_RECORD_TOO_LARGE: grpc.status.INVALID_ARGUMENT,
  E_EMPTY_APPEND: grpc.status.INVALID_ARGUMENT,
  E_OVERLOADED: grpc.status.RESOURCE_EXHAUSTED,
  E_LOG_FAILED: grpc.status.INTERNAL,
  E_UNAVAILABLE: grpc.status.UNAVAILABLE,
  E_STOPPED: grpc.status.UNAVAILABLE,
  E_NODE_NOT_ALIVE: grpc.status.FAILED_PRECONDITION,
  E_NODE_NOT_HOSTING: grpc.status.FAILED_PRECONDITION,
  E_DATA_DIR_LOCKED: grpc.status.FAILED_PRECONDITION,
};

export class LogServerError extends LimboError {
  declare readonly code: LogErrorCode;
  constructor(code: LogErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
  get grpcStatus(): grpc.status {
    return statusOf[this.code];
  }
}

/** Any thrown value → the error object a grpc-js callback or stream expects. */
export function toServiceError(err: unknown): Pick<grpc.StatusObject, 'code' | 'details'> & Error {
  if (err instanceof LogServerError) {
    return Object.assign(new Error(err.message), { code: err.grpcStatus, details: err.message });
  }
  const message = messageOf(err);
  return Object.assign(new Error(message), { code: grpc.status.INTERNAL, details: message });
}

export function unknownPartition(partition: number, numPartitions: number): LogServerError {
  return new LogServerError(
    'E_UNKNOWN_PARTITION',
    `unknown partition ${partition} (partitions 0..${numPartitions - 1})`,
  );
}

/** A request field the log server refuses (INVALID_ARGUMENT). */
export function badRequest(field: string, message: string): LogServerError {
  return new LogServerError('E_BAD_REQUEST', `${field}: ${message}`);
}

/** Refuses a string field longer than `max` characters. */
export function checkChars(field: string, value: string, max: number): void {
  if (value.length > max) throw badRequest(field, `longer than ${max} characters`);
}
