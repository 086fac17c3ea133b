// The log client's batches over one Log.AppendStream (mux-stream.ts): each batch is a
// message with an id of its own, answered by the response with the same id. The append
// batcher (append-batcher.ts) still decides what goes together and keeps each append's
// deadline and signal.
//
//   batcher ─send(batch)─▶ stream.write({batchId, items}) ─▶ log server
//   batch's done ◀─ response {batchId, results} ◀──────────────┘
//
// When the stream ends every batch still waiting on it fails with the stream's status; a
// batch the batcher cancels (its appends all answered: deadlines, aborts) is answered at
// once and its late response ignored.
import { status, type ClientDuplexStream } from '@grpc/grpc-js';
import type { BatchCall } from './append-batcher.js';
import { MuxStream, statusError } from './mux-stream.js';
import type * as w from '../protocol/wire.js';

export class AppendStreamSender {
  private readonly mux: MuxStream<w.AppendBatchRequest, w.AppendBatchResponse>;

  constructor(open: () => ClientDuplexStream<w.AppendBatchRequest, w.AppendBatchResponse>) {
    this.mux = new MuxStream({
      open,
      withId: (req, batchId) => ({ items: req.items, batchId }),
      idOf: (res) => Number(res.batchId ?? 0),
      endedMessage: 'the log server ended the append stream',
      closedMessage: 'the log client is closed',
    });
  }

  /** Streams opened so far (1 while the first one lasts). */
  get streams(): number {
    return this.mux.streams;
  }

  /**
   * Sends one batch. No timer of its own for the batch's deadline: the batcher times each
   * append and cancels a batch once all its appends are answered, which is when the latest
   * deadline passes.
   */
  send(request: w.AppendBatchRequest): BatchCall {
    const { id, done } = this.mux.send(request);
    return { done, cancel: () => this.mux.settle(id, statusError(status.CANCELLED, 'Cancelled on client')) };
  }

  /** Ends the stream: batches still waiting fail CANCELLED. */
  close(): void {
    this.mux.close();
  }
}
