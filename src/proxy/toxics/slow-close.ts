// slow_close: data passes; the end of the stream is held back `delay` ms.
import { END } from '../chunk-queue.js';
import type { ToxicDefinition, ToxicStub } from '../toxic.js';

export const slowCloseToxic: ToxicDefinition = {
  type: 'slow_close',
  attributes: ['delay'],
  create: (attrs) => ({
    async pipe(stub: ToxicStub): Promise<void> {
      for (;;) {
        const item = await stub.receive();
        if (item === undefined) return;
        if (item === END) {
          await stub.sleep(attrs.delay ?? 0);
          return stub.close();
        }
        stub.send(item);
      }
    },
  }),
};
