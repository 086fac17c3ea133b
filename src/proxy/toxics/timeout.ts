// timeout: a black hole. Drops every chunk in its direction and closes the connection
// after `timeout` ms without input (each dropped chunk restarts the clock); 0 never
// closes. Removing it from a live connection closes that connection.
import { END } from '../chunk-queue.js';
import type { ToxicDefinition, ToxicStub } from '../toxic.js';

export const timeoutToxic: ToxicDefinition = {
  type: 'timeout',
  attributes: ['timeout'],
  create: (attrs) => ({
    async pipe(stub: ToxicStub): Promise<void> {
      const timeoutMs = attrs.timeout ?? 0;
      for (;;) {
        const item = timeoutMs > 0 ? await stub.receiveWithin(timeoutMs) : await stub.receive();
        if (item === undefined) return;
        if (item === END || item === 'timeout') return stub.close();
      }
    },
    cleanup(stub: ToxicStub): void {
      stub.close();
    },
  }),
};
