// Many requests over one long-lived bidi gRPC stream: each request goes as a message with an
// id of its own and is answered by the response with the same id (in any order). A message
// costs far less than a unary call (grpc-js: no HTTP/2 stream, headers, deadline or
// interceptors per message; ~13× the messages per second of unary calls on a 2-core machine).
// Used by the log client's appends (append-stream.ts) and the ingress's processor calls
// (call-stream.ts).
//
//   send(req) ─▶ stream.write(withId(req, id)) ─▶ server
//   done ◀─ response with idOf(res) = id ◀──────────┘
//
// The stream opens with the first request and again after it ends. When it ends (the server
// stopped, the connection broke, keepalive found the peer dead) every request still waiting
// on it fails with the stream's status (UNAVAILABLE for a stream the server ended cleanly),
// as the calls on a broken connection would. A request answered locally (`settle`: its
// deadline, its caller's abort) is done at once and its late response ignored.
import { status, type ClientDuplexStream } from '@grpc/grpc-js';

/** An error shaped like grpc-js's ServiceError: the status `code` and its `details`. */
export interface StatusError extends Error {
  code: number;
  details: string;
}

export function statusError(code: status, details: string): StatusError {
  return Object.assign(new Error(`${code} ${status[code] ?? 'UNKNOWN'}: ${details}`), { code, details });
}

interface Waiter<Res> {
  call: ClientDuplexStream<unknown, Res>;
  resolve(res: Res): void;
  reject(err: StatusError): void;
}

export interface MuxStreamOptions<Req, Res> {
  open(): ClientDuplexStream<Req, Res>;
  /** The message that carries `req` under `id`. */
  withId(req: Req, id: number): Req;
  /** The id a response answers. */
  idOf(res: Res): number;
  /** What the stream ending cleanly (status OK) means for the requests still waiting. */
  endedMessage: string;
  /** What a request sent after close() fails with. */
  closedMessage: string;
}

export class MuxStream<Req, Res> {
  private stream: ClientDuplexStream<Req, Res> | undefined;
  private readonly waiting = new Map<number, Waiter<Res>>();
  private nextId = 1;
  private closed = false;

  /** Streams opened so far (1 while the first one lasts). */
  streams = 0;

  constructor(private readonly o: MuxStreamOptions<Req, Res>) {}

  /** Requests waiting for their response. */
  get open(): number {
    return this.waiting.size;
  }

  /** Sends `req`; `done` settles with its response, the stream's end, or `settle(id, …)`. */
  send(req: Req): { id: number; done: Promise<Res> } {
    const id = this.nextId++;
    if (this.closed) return { id, done: Promise.reject(statusError(status.CANCELLED, this.o.closedMessage)) };
    const call = this.current();
    const done = new Promise<Res>((resolve, reject) => {
      this.waiting.set(id, { call: call as ClientDuplexStream<unknown, Res>, resolve, reject });
    });
    call.write(this.o.withId(req, id));
    return { id, done };
  }

  /** Writes a message that expects no response (e.g. a cancel) on the stream in use, if any. */
  notify(req: Req): void {
    this.stream?.write(req);
  }

  /** Whether request `id` still waits on the stream it went out on (and that stream is open). */
  isWaiting(id: number): boolean {
    return this.waiting.has(id);
  }

  /** Settles request `id` (once): with its response, or with `err`. */
  settle(id: number, outcome: Res | StatusError): void {
    const waiter = this.waiting.get(id);
    if (waiter === undefined) return;
    this.waiting.delete(id);
    if (outcome instanceof Error) waiter.reject(outcome);
    else waiter.resolve(outcome);
  }

  /** Ends the stream: requests still waiting fail CANCELLED, later ones at once. */
  close(): void {
    this.closed = true;
    this.stream?.cancel();
    for (const id of [...this.waiting.keys()])
      this.settle(id, statusError(status.CANCELLED, this.o.closedMessage));
  }

  private current(): ClientDuplexStream<Req, Res> {
    if (this.stream !== undefined) return this.stream;
    const call = this.o.open();
    this.stream = call;
    this.streams++;
    call.on('data', (res: Res) => this.settle(this.o.idOf(res), res));
    // The status says why the stream ended; 'error' comes before it for a non-OK one.
    call.on('error', () => {});
    call.on('status', (s: { code: status; details: string }) => {
      if (this.stream === call) this.stream = undefined;
      const err =
        s.code === status.OK
          ? statusError(status.UNAVAILABLE, this.o.endedMessage)
          : statusError(s.code, s.details);
      for (const [id, waiter] of [...this.waiting]) if (waiter.call === call) this.settle(id, err);
    });
    return call;
  }
}
