// bandwidth: throttles a direction to `rate` KB/s (1 KB = 1000 B); 0 means unlimited.
// Large chunks go out in 100 ms slices; timer error is carried into the next sleep.
import { END } from '../chunk-queue.js';
import type { ToxicDefinition, ToxicStub } from '../toxic.js';

export const bandwidthToxic: ToxicDefinition = {
  type: 'bandwidth',
  attributes: ['rate'],
  create: (attrs) => ({
    async pipe(stub: ToxicStub): Promise<void> {
      const rate = attrs.rate ?? 0; // bytes per ms
      let sleepMs = 0;
      for (;;) {
        const item = await stub.receive();
        if (item === undefined) return;
        if (item === END) return stub.close();
        if (rate <= 0) {
          stub.send(item);
          continue;
        }
        let data = item.data;
        sleepMs += data.length / rate;
        const sliceBytes = rate * 100;
        while (data.length > sliceBytes) {
          if (!(await stub.sleep(100))) {
            stub.send({ data, timestampMs: item.timestampMs });
            return;
          }
          stub.send({ data: data.subarray(0, sliceBytes), timestampMs: item.timestampMs });
          data = data.subarray(sliceBytes);
          sleepMs -= 100;
        }
        const start = performance.now();
        const slept = sleepMs > 0 ? await stub.sleep(sleepMs) : true;
        sleepMs -= performance.now() - start;
        stub.send({ data, timestampMs: item.timestampMs });
        if (!slept) return;
      }
    },
  }),
};
