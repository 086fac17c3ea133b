// limit_data: lets `bytes` bytes through in its direction (cutting the chunk that crosses
// the limit), then closes the connection. The count survives updates of the toxic.
import { END } from '../chunk-queue.js';
import type { ToxicDefinition, ToxicStub } from '../toxic.js';

export const limitDataToxic: ToxicDefinition = {
  type: 'limit_data',
  attributes: ['bytes'],
  create: (attrs) => ({
    async pipe(stub: ToxicStub): Promise<void> {
      const limit = attrs.bytes ?? 0;
      for (;;) {
        const item = await stub.receive();
        if (item === undefined) return;
        if (item === END) return stub.close();
        const sent = stub.state.bytesTransmitted ?? 0;
        const remaining = Math.max(0, limit - sent);
        const data = item.data.length > remaining ? item.data.subarray(0, remaining) : item.data;
        if (data.length > 0) {
          stub.send({ data, timestampMs: item.timestampMs });
          stub.state.bytesTransmitted = sent + data.length;
        }
        if ((stub.state.bytesTransmitted ?? 0) >= limit) return stub.close();
      }
    },
  }),
};
