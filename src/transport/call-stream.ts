// The ingress's Submit and GetOutput calls to one processor over one Processor.Calls stream
// (mux-stream.ts), with the unary calls' behaviour kept on this side: each call has its own
// deadline and signal, and fails with the gRPC status a unary call would (DEADLINE_EXCEEDED,
// CANCELLED, UNAVAILABLE when the connection breaks, the server's status for a call it
// failed). A call that gives up locally also sends a cancel, so the processor frees its reply
// slot as it does for a cancelled unary call.
//
//   call(req, {timeoutMs, signal}) ─▶ {callId, submit|getOutput} ─▶ processor
//   answer ◀─ {callId, submit|getOutput|status} ◀─────────────────────┘
//   deadline / abort ─▶ rejected at once + {callId, cancel}
import { status, type ClientDuplexStream } from '@grpc/grpc-js';
import { MuxStream, statusError } from './mux-stream.js';
import type * as w from '../protocol/wire.js';

export interface StreamCallOptions {
  /** Per-call deadline in milliseconds from now. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

type Calls = ClientDuplexStream<w.ProcessorCall, w.ProcessorReply>;

export class ProcessorCallSender {
  private readonly mux: MuxStream<w.ProcessorCall, w.ProcessorReply>;

  constructor(open: () => Calls) {
    this.mux = new MuxStream<w.ProcessorCall, w.ProcessorReply>({
      open,
      withId: (call, callId) => ({ ...call, callId }),
      idOf: (reply: w.ProcessorReply) => Number(reply.callId),
      endedMessage: 'the processor ended the call stream',
      closedMessage: 'the processor client is closed',
    });
  }

  /** Streams opened so far, and calls waiting for their answer. */
  get stats(): { streams: number; open: number } {
    return { streams: this.mux.streams, open: this.mux.open };
  }

  submit(req: w.SubmitRequest, options: StreamCallOptions = {}): Promise<w.SubmitResponse> {
    return this.call({ callId: 0, call: 'submit', submit: req }, options).then((r) =>
      r.reply === 'submit' ? r.submit : Promise.reject(unexpected(r)),
    );
  }

  getOutput(req: w.GetOutputRequest, options: StreamCallOptions = {}): Promise<w.GetOutputResponse> {
    return this.call({ callId: 0, call: 'getOutput', getOutput: req }, options).then((r) =>
      r.reply === 'getOutput' ? r.getOutput : Promise.reject(unexpected(r)),
    );
  }

  /** Ends the stream: calls still waiting fail CANCELLED. */
  close(): void {
    this.mux.close();
  }

  private call(message: w.ProcessorCall, options: StreamCallOptions): Promise<w.ProcessorReply> {
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.reject(statusError(status.CANCELLED, 'Cancelled on client'));
    const { id, done } = this.mux.send(message);
    // Gives up on the call here (once) and tells the processor, which frees the reply slot.
    const withdraw = (code: status, details: string): void => {
      if (!this.mux.isWaiting(id)) return;
      this.mux.settle(id, statusError(code, details));
      this.mux.notify({ callId: id, call: 'cancel', cancel: {} });
    };
    const timer =
      timeoutMs !== undefined
        ? setTimeout(() => withdraw(status.DEADLINE_EXCEEDED, 'Deadline exceeded'), Math.max(0, timeoutMs))
        : undefined;
    const onAbort = (): void => withdraw(status.CANCELLED, 'Cancelled on client');
    signal?.addEventListener('abort', onAbort, { once: true });
    const cleanup = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    return done.then(
      (reply) => {
        cleanup();
        return reply.reply === 'status'
          ? Promise.reject(statusError(reply.status.code, reply.status.message))
          : reply;
      },
      (err: unknown) => {
        cleanup();
        throw err;
      },
    );
  }
}

function unexpected(reply: w.ProcessorReply): Error {
  return statusError(status.INTERNAL, `the processor answered a call with a "${reply.reply}" reply`);
}
