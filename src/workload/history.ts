// Records the history of a run's client ops as they happen: in memory for the checkers, and
// appended to history.jsonl (when a path is given) so a crashed run still leaves its history.
//
//   op ─▶ invoke(...) ─▶ [opId] ─▶ complete(opId, ok|fail|info) ─▶ history[] + jsonl
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { Clock } from '../util/clock.js';
import type { HistoryOp, OpError, OpKind, OpRequest, OpResponse } from '../run-data/run-data.js';

export interface Completion {
  type: 'ok' | 'fail' | 'info';
  invocationId?: string;
  traceId?: string;
  response?: OpResponse;
  error?: OpError;
  /** The client gave up on the request before its answer (recorded as info, code `aborted`). */
  gaveUp?: boolean;
  /** The run's stop aborted the request: the op stays open in the history (not recorded). */
  keepOpen?: boolean;
}

export interface HistoryRecorder {
  readonly ops: readonly HistoryOp[];
  invoke(process: number, kind: OpKind, request: OpRequest, invocationId?: string, traceId?: string): number;
  complete(opId: number, completion: Completion): void;
  /** Ops invoked and not yet completed. */
  inFlight(): number;
  completed(): number;
  openOps(): HistoryOp[];
  close(): Promise<void>;
}

export function createHistoryRecorder(clock: Clock, jsonlPath?: string): HistoryRecorder {
  const ops: HistoryOp[] = [];
  const open = new Map<number, HistoryOp>();
  let nextId = 1;
  let done = 0;
  let out: WriteStream | undefined;
  let closing: Promise<void> | undefined;
  if (jsonlPath !== undefined) {
    mkdirSync(dirname(jsonlPath), { recursive: true });
    out = createWriteStream(jsonlPath, { flags: 'w' });
  }
  const push = (op: HistoryOp): void => {
    ops.push(op);
    out?.write(JSON.stringify(op) + '\n');
  };
  return {
    ops,
    invoke(process, kind, request, invocationId, traceId) {
      const op: HistoryOp = {
        type: 'invoke',
        opId: nextId++,
        process,
        kind,
        request,
        timeMs: clock.nowMs(),
        wallTime: clock.wallTime(),
      };
      if (invocationId !== undefined) op.invocationId = invocationId;
      if (traceId !== undefined) op.traceId = traceId;
      open.set(op.opId, op);
      push(op);
      return op.opId;
    },
    complete(opId, c) {
      const inv = open.get(opId);
      if (inv === undefined) return; // completing twice is a bug in a client; keep the first
      open.delete(opId);
      done++;
      const op: HistoryOp = {
        type: c.type,
        opId,
        process: inv.process,
        kind: inv.kind,
        request: inv.request,
        timeMs: clock.nowMs(),
        wallTime: clock.wallTime(),
      };
      const id = c.invocationId ?? inv.invocationId;
      if (id !== undefined) op.invocationId = id;
      const traceId = c.traceId ?? inv.traceId;
      if (traceId !== undefined) op.traceId = traceId;
      if (c.response !== undefined) op.response = c.response;
      if (c.error !== undefined) op.error = c.error;
      push(op);
    },
    inFlight: () => open.size,
    completed: () => done,
    openOps: () => [...open.values()],
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        if (out === undefined) return resolve();
        out.end(() => resolve());
      })),
  };
}
