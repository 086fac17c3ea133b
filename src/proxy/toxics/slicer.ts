// slicer: cuts each chunk into pieces of about `average_size` ± `size_variation` bytes and
// waits `delay` µs between pieces (timers have 1 ms resolution, so any delay > 0 waits at
// least 1 ms). Bytes and their order are intact.
import { END } from '../chunk-queue.js';
import type { ToxicDefinition, ToxicStub } from '../toxic.js';

/** Cut points of [start, end) by recursive halving with a random offset. */
export function slicePoints(
  start: number,
  end: number,
  averageSize: number,
  sizeVariation: number,
  random: () => number,
  depth = 0,
): number[] {
  if (end - start - averageSize <= sizeVariation || depth > 64) return [start, end];
  let mid = start + Math.floor((end - start) / 2);
  if (sizeVariation > 0) mid += Math.floor(random() * 2 * sizeVariation) - sizeVariation;
  mid = Math.min(end - 1, Math.max(start + 1, mid));
  const left = slicePoints(start, mid, averageSize, sizeVariation, random, depth + 1);
  const right = slicePoints(mid, end, averageSize, sizeVariation, random, depth + 1);
  return [...left, ...right.slice(1)];
}

export const slicerToxic: ToxicDefinition = {
  type: 'slicer',
  attributes: ['average_size', 'size_variation', 'delay'],
  create: (attrs) => ({
    async pipe(stub: ToxicStub): Promise<void> {
      const averageSize = Math.max(1, attrs.average_size ?? 0);
      const sizeVariation = Math.max(0, attrs.size_variation ?? 0);
      const delayMs = (attrs.delay ?? 0) / 1000;
      for (;;) {
        const item = await stub.receive();
        if (item === undefined) return;
        if (item === END) return stub.close();
        const points = slicePoints(0, item.data.length, averageSize, sizeVariation, stub.random);
        for (let i = 1; i < points.length; i++) {
          const from = points[i - 1] as number;
          const to = points[i] as number;
          stub.send({ data: item.data.subarray(from, to), timestampMs: item.timestampMs });
          if (i < points.length - 1 && delayMs > 0 && !(await stub.sleep(delayMs))) {
            stub.send({ data: item.data.subarray(to), timestampMs: item.timestampMs });
            return;
          }
        }
      }
    },
  }),
};
