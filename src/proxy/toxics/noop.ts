// Passes everything through untouched: stage 0 of every link, what a toxic becomes on a
// connection where its toxicity roll missed, and the `noop` type Toxiproxy registers.
import { END } from '../chunk-queue.js';
import type { Toxic, ToxicDefinition, ToxicStub } from '../toxic.js';

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

export const noopToxicDefinition: ToxicDefinition = {
  type: 'noop',
  attributes: [],
  create: () => noopToxic,
};
