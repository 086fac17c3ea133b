// packet_loss (upstream Toxiproxy after 2.12, Shopify/toxiproxy#739; an extension here):
// drops whole chunks in its direction. Each chunk is lost with probability `loss_rate`, or
// `loss_rate + correlation` right after a loss, so losses come in bursts (a simplified
// Gilbert-Elliott channel). Bytes that pass are intact and in order; TCP above sees a
// stream with holes, as an application would behind a lossy tunnel. Draws come from the
// stub's random source, so a seeded server drops the same chunks on every replay.
import { END } from '../chunk-queue.js';
import type { ToxicDefinition, ToxicStub } from '../toxic.js';

export const packetLossToxic: ToxicDefinition = {
  type: 'packet_loss',
  attributes: ['loss_rate', 'correlation'],
  floatAttributes: ['loss_rate', 'correlation'],
  defaults: { loss_rate: 0.1, correlation: 0 },
  create: (attrs) => ({
    async pipe(stub: ToxicStub): Promise<void> {
      const lossRate = clamp01(attrs.loss_rate ?? 0);
      const correlation = clamp01(attrs.correlation ?? 0);
      for (;;) {
        const item = await stub.receive();
        if (item === undefined) return;
        if (item === END) return stub.close();
        const lost = stub.state.lastLost === 1;
        const p = Math.min(1, lost ? lossRate + correlation : lossRate);
        if (stub.random() < p) {
          stub.state.lastLost = 1;
          continue;
        }
        stub.state.lastLost = 0;
        stub.send(item);
      }
    },
  }),
};

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}
