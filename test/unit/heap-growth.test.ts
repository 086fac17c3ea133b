// limitHeapGrowth (util/gc.ts): set at run time, V8's old generation stays near what it keeps
// alive; a process given its own --heap-growing-percent is left alone.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { limitHeapGrowth } from '../../src/util/gc.js';

const gcModule = fileURLToPath(new URL('../../src/util/gc.js', import.meta.url));

/** Peak heapTotal (MiB) of a child making mid-lived garbage (batches that outlive a few scavenges). */
function peakHeapMiB(limit: boolean): number {
  const program = `
    const { limitHeapGrowth } = await import(${JSON.stringify(gcModule)});
    if (${limit}) limitHeapGrowth();
    const live = []; let peak = 0;
    for (let round = 0; round < 150; round++) {
      const batch = []; for (let i = 0; i < 20000; i++) batch.push({ a: i, s: 'x'.repeat(20) + i });
      live.push(batch); if (live.length > 8) live.shift();
      await new Promise((r) => setImmediate(r));
      peak = Math.max(peak, process.memoryUsage().heapTotal);
    }
    process.stdout.write(String(peak / 1048576));`;
  return Number(
    execFileSync(process.execPath, ['--input-type=module', '-e', program], {
      encoding: 'utf8',
      timeout: 60_000,
    }),
  );
}

test('limitHeapGrowth keeps the old generation near its live size', () => {
  const free = peakHeapMiB(false);
  const limited = peakHeapMiB(true);
  // ~25 MiB live: V8's own growth peaked at ~220 MiB here, limited ~100.
  assert.ok(limited < 0.8 * free, `peak heap ${limited.toFixed(0)} MiB limited vs ${free.toFixed(0)} MiB`);
});

test('a process started with its own --heap-growing-percent keeps it', () => {
  assert.equal(limitHeapGrowth(['--heap-growing-percent=50'], ''), false);
  assert.equal(limitHeapGrowth([], '--max-semi-space-size=4 --heap_growing_percent=50'), false);
});
