// Passes everything through untouched: stage 0 of every link, and what a toxic becomes on
// a connection where its toxicity roll missed.
import { END } from '../chunk-queue.js';
import type { Toxic, ToxicStub } from '../toxic.js';

export const noopToxic: Toxic = {
  async pipe(stub: ToxicStub): Promise<void> {
    for (;;) {
      const item = await stub.receive();
      if (item === undefined) return;
      if (item === END) return stub.close();
      stub.send(item);
    }
  },
};
