// The log client's batches over one Log.AppendStream: each batch is a message with an id of
// its own, answered by the response with the same id. A message costs far less than a call
// (grpc-js: no HTTP/2 stream, headers, deadline or interceptors per batch; ~13× the messages
// per second of unary calls on this machine), and the append batcher (append-batcher.ts)
// still decides what goes together and keeps each append's deadline and signal.
//
//   batcher ─send(batch)─▶ stream.write({batchId, items}) ─▶ log server
//   batch's done ◀─ response {batchId, results} ◀──────────────┘
//
// The stream opens with the first batch and again after it ends. When it ends (the server
// stopped, the connection broke, keepalive found the peer dead) every batch still waiting
// on it fails with the stream's status, as the calls on a broken connection would; a batch
// the batcher cancels (its appends all answered: deadlines, aborts) is answered at once and
// its late response ignored.
import { status, type ClientDuplexStream } from '@grpc/grpc-js';
import { appendError, type AppendError, type BatchCall } from './append-batcher.js';
import type * as w from './wire.js';

type AppendDuplex = ClientDuplexStream<w.AppendBatchRequest, w.AppendBatchResponse>;

interface Waiter {
  call: AppendDuplex;
  resolve(res: w.AppendBatchResponse): void;
  reject(err: AppendError): void;
}

export class AppendStreamSender {
  private call: AppendDuplex | undefined;
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly open: () => AppendDuplex) {}

  /** Streams opened so far (1 while the first one lasts). */
  streams = 0;

  /**
   * Sends one batch. No timer of its own for the batch's deadline: the batcher times each
   * append and cancels a batch once all its appends are answered, which is when the latest
   * deadline passes.
   */
  send(request: w.AppendBatchRequest): BatchCall {
    const id = this.nextId++;
    if (this.closed)
      return {
        done: Promise.reject(appendError(status.CANCELLED, 'the log client is closed')),
        cancel: () => {},
      };
    const call = this.stream();
    const done = new Promise<w.AppendBatchResponse>((resolve, reject) => {
      this.waiting.set(id, { call, resolve, reject });
    });
    call.write({ items: request.items, batchId: id });
    return { done, cancel: () => this.answer(id, appendError(status.CANCELLED, 'Cancelled on client')) };
  }

  /** Ends the stream: batches still waiting fail CANCELLED. */
  close(): void {
    this.closed = true;
    this.call?.cancel();
    for (const id of [...this.waiting.keys()])
      this.answer(id, appendError(status.CANCELLED, 'the log client is closed'));
  }

  /** Settles batch `id` (once): with its response, or with `err`. */
  private answer(id: number, outcome: w.AppendBatchResponse | AppendError): void {
    const waiter = this.waiting.get(id);
    if (waiter === undefined) return;
    this.waiting.delete(id);
    if (outcome instanceof Error) waiter.reject(outcome);
    else waiter.resolve(outcome);
  }

  private stream(): AppendDuplex {
    if (this.call !== undefined) return this.call;
    const call = this.open();
    this.call = call;
    this.streams++;
    call.on('data', (res: w.AppendBatchResponse) => this.answer(Number(res.batchId ?? 0), res));
    // The status says why the stream ended; 'error' comes before it for a non-OK one.
    call.on('error', () => {});
    call.on('status', (s: { code: status; details: string }) => {
      if (this.call === call) this.call = undefined;
      const err =
        s.code === status.OK
          ? appendError(status.UNAVAILABLE, 'the log server ended the append stream')
          : appendError(s.code, s.details);
      for (const [id, waiter] of [...this.waiting]) if (waiter.call === call) this.answer(id, err);
    });
    return call;
  }
}
