// collectGarbage (launch/gc.ts) really collects — without --expose-gc — and leaves the main
// context's globals alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collectGarbage } from '../../src/launch/gc.js';

test('collectGarbage frees dropped objects at once and adds no global gc', () => {
  const hadGc = 'gc' in globalThis;
  const holder: { garbage?: { id: string; n: number[] }[] } = { garbage: [] };
  for (let i = 0; i < 300_000; i++) holder.garbage?.push({ id: `object-${i}`, n: [i, i + 1, i + 2] });
  assert.ok(collectGarbage(), 'a full collection ran');
  const held = process.memoryUsage().heapUsed;
  assert.equal(holder.garbage?.length, 300_000);
  delete holder.garbage;
  assert.ok(collectGarbage());
  const after = process.memoryUsage().heapUsed;
  // ~30 MiB of objects: at least 15 MiB of heap is given back by the one call.
  assert.ok(
    held - after > 15 * 1024 * 1024,
    `heap ${Math.round(held / 1048576)} -> ${Math.round(after / 1048576)} MiB`,
  );
  assert.equal('gc' in globalThis, hadGc);
});
