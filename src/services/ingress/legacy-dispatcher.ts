// The legacy protocol (the seed's bug, kept on purpose so suites can be seen to catch it).
//
//   client ─▶ ingress ──Log.Append(Invoke{ingressId, requestId})──▶ log
//                ▲                                                   │ applied by every replica
//                └──── Subscribe stream ◀── SubmitNotification / InvocationResponse
//                                          pushed ONCE by whichever replica leads at apply time
// If no replica leads when the record is applied (start-up, leadership change), or the
// stream is not connected at that moment, nothing is ever sent and the client waits forever.
import { randomUUID } from 'node:crypto';
import type { LogClient } from '../../transport/grpc.js';
import { encodeRecord, type InvokeRecord } from '../../protocol/records.js';
import type * as w from '../../protocol/wire.js';
import type { Logger } from '../../telemetry/logger.js';
import { Backoff, sleep } from '../../util/backoff.js';
import type { Router } from './router.js';
import type { SubmitInput } from './dispatcher.js';

interface Waiter {
  wants: 'SUBMITTED' | 'OUTPUT';
  resolve(r: { result: 'submitted'; submitted: w.Submitted } | { result: 'output'; output: w.Output }): void;
}

export class LegacyDispatcher {
  private readonly waiters = new Map<string, Waiter>();
  private readonly streams = new Map<string, { cancel(): void }>();
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly router: Router,
    private readonly log: LogClient,
    private readonly ingressId: string,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.subscribeAll(), 250);
    this.timer.unref();
  }

  stop(): void {
    this.abort.abort(new Error('stopping'));
    clearInterval(this.timer);
    for (const s of this.streams.values()) s.cancel();
    this.streams.clear();
  }

  async submit(
    input: SubmitInput,
    signal: AbortSignal,
  ): Promise<{ result: 'submitted'; submitted: w.Submitted } | { result: 'output'; output: w.Output }> {
    const requestId = randomUUID();
    const answered = new Promise<Parameters<Waiter['resolve']>[0]>((resolve) => {
      this.waiters.set(requestId, { wants: input.replyOn, resolve });
    });
    try {
      const record: InvokeRecord = {
        type: 'invoke',
        invocationId: input.invocationId,
        service: input.service,
        key: input.key,
        handler: input.handler,
        payload: input.payload.toString('utf8'),
        ingressId: this.ingressId,
        requestId,
        createdAtMs: Date.now(),
      };
      if (input.idempotencyKey !== '') record.idempotencyKey = input.idempotencyKey;
      if (input.traceparent !== '') record.traceparent = input.traceparent;
      const backoff = new Backoff();
      for (;;) {
        signal.throwIfAborted();
        try {
          await this.log.append(
            { partition: input.partition, records: [encodeRecord(record)] },
            { timeoutMs: 5000, signal },
          );
          break;
        } catch (err) {
          signal.throwIfAborted();
          this.logger.debug('legacy append failed, retrying', { error: err });
          await sleep(backoff.next(), signal);
        }
      }
      return await new Promise((resolve, reject) => {
        const onAbort = (): void => reject(signal.reason as Error);
        signal.addEventListener('abort', onAbort, { once: true });
        void answered.then((r) => {
          signal.removeEventListener('abort', onAbort);
          resolve(r);
        });
      });
    } finally {
      this.waiters.delete(requestId);
    }
  }

  private onNotification(n: w.IngressNotification): void {
    const waiter = this.waiters.get(n.requestId);
    if (!waiter) return;
    if (n.kind === 'submitNotification' && waiter.wants === 'SUBMITTED') {
      waiter.resolve({ result: 'submitted', submitted: n.submitNotification });
    } else if (n.kind === 'invocationResponse' && waiter.wants === 'OUTPUT') {
      waiter.resolve({ result: 'output', output: n.invocationResponse });
    }
  }

  /** Keeps one Subscribe stream open to every processor in the table. */
  private subscribeAll(): void {
    if (this.abort.signal.aborted) return;
    for (const node of this.router.current?.nodes ?? []) {
      if (node.address === '' || this.streams.has(node.address)) continue;
      const address = node.address;
      const stream = this.router
        .client(address)
        .subscribe({ ingressId: this.ingressId }, { signal: this.abort.signal });
      this.streams.set(address, stream);
      const drop = (): void => {
        if (this.streams.get(address) === stream) this.streams.delete(address);
      };
      stream.on('data', (n: w.IngressNotification) => this.onNotification(n));
      stream.on('error', drop);
      stream.on('end', drop);
    }
  }
}
