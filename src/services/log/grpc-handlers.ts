// Small adapters between promise-returning service code and grpc-js handlers: errors
// become gRPC statuses (LogServerError → its status, anything else → INTERNAL), and
// streamed writes wait for the transport (backpressure) or the caller going away.
import type { grpc } from '../../transport/grpc.js';
import { toServiceError } from './errors.js';

export function unaryHandler<Req, Res>(
  fn: (req: Req, metadata: grpc.Metadata) => Promise<Res> | Res,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => fn(call.request, call.metadata))
      .then(
        (res) => callback(null, res),
        (err: unknown) => callback(toServiceError(err)),
      );
  };
}

/**
 * Writes one message and resolves once the transport has taken it (so at most one message
 * per stream waits in memory), or once `signal` aborts.
 */
export function writeMessage<T>(
  call: grpc.ServerWritableStream<unknown, T>,
  message: T,
  signal: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = (): void => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    call.write(message, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

type ServerStream = grpc.ServerWritableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>;

/** Tracks the open streams of a server so that stop() can end them with UNAVAILABLE. */
export class StreamRegistry {
  private readonly open = new Map<AbortController, ServerStream>();

  /** An AbortSignal that fires when the caller cancels or the server stops. */
  add(call: ServerStream): { signal: AbortSignal; done: () => void } {
    const ac = new AbortController();
    this.open.set(ac, call);
    const done = (): void => {
      this.open.delete(ac);
      ac.abort();
    };
    call.on('cancelled', done);
    call.on('close', done);
    call.on('error', done);
    return { signal: ac.signal, done };
  }

  /** Ends every open stream with `status` and aborts its work. */
  closeAll(status: Partial<grpc.StatusObject> & Error): void {
    for (const [ac, call] of [...this.open]) {
      this.open.delete(ac);
      ac.abort();
      call.emit('error', status);
    }
  }
}
