// reset_peer: on the first data (or end) in its direction, drops it, waits `timeout` ms and
// resets the connection with a real TCP RST, as a crashed peer would.
import type { ToxicDefinition, ToxicStub } from '../toxic.js';

export const resetPeerToxic: ToxicDefinition = {
  type: 'reset_peer',
  attributes: ['timeout'],
  create: (attrs) => ({
    async pipe(stub: ToxicStub): Promise<void> {
      const item = await stub.receive();
      if (item === undefined) return;
      await stub.sleep(attrs.timeout ?? 0);
      stub.reset();
    },
  }),
};
