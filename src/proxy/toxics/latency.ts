// latency: each chunk leaves `latency ± jitter` ms after it arrived. Delays are measured
// from arrival, so a stream of chunks is pipelined (throughput kept), not serialised.
// On interrupt the held chunk is sent at once: nothing is dropped.
import { END } from '../chunk-queue.js';
import type { ToxicDefinition, ToxicStub } from '../toxic.js';

export const latencyToxic: ToxicDefinition = {
  type: 'latency',
  attributes: ['latency', 'jitter'],
  create: (attrs) => ({
    async pipe(stub: ToxicStub): Promise<void> {
      const latencyMs = attrs.latency ?? 0;
      const jitterMs = attrs.jitter ?? 0;
      for (;;) {
        const item = await stub.receive();
        if (item === undefined) return;
        if (item === END) return stub.close();
        const delayMs =
          jitterMs > 0 ? latencyMs + Math.floor(stub.random() * 2 * jitterMs) - jitterMs : latencyMs;
        const dueMs = item.timestampMs + delayMs;
        if (dueMs > performance.now()) {
          // Timers take whole milliseconds and may fire a little early: sleep until the chunk
          // is really due, so it never leaves before latency - jitter (bounded: each round
          // sleeps at least 1 ms towards a fixed due time).
          let slept = true;
          while (slept && dueMs > performance.now())
            slept = await stub.sleep(Math.ceil(dueMs - performance.now()));
          stub.send({ data: item.data, timestampMs: dueMs });
          if (!slept) return;
        } else stub.send(item);
      }
    },
  }),
};
