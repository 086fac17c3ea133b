// The partition file's cache of recent batches, on its own in this process (what it measures
// is every buffer the process holds, so no other test may share the process).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PartitionLog } from '../../src/services/log/partition-log.js';
import { silentLogger } from '../../src/telemetry/logger.js';
import { collectGarbage } from '../../src/launch/gc.js';
import { recordOf, tempDir } from './log-harness.js';

/** A partition file in a fresh folder with a cache bound of `maxCachedBytes`. */
async function openLog(dir: string, maxCachedBytes: number): Promise<PartitionLog> {
  return PartitionLog.open({ partition: 0, file: join(dir, 'p.log'), logger: silentLogger, maxCachedBytes });
}

/**
 * The buffer bytes held past `before`. V8 frees a collected buffer's memory on a background
 * sweep: collect, and look again a turn later, a bounded number of times, until under `limit`
 * (what the cache keeps alive never goes).
 */
async function heldAfterCollecting(before: number, limit: number): Promise<number> {
  let held = Infinity;
  for (let i = 0; i < 50 && held >= limit; i++) {
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 20));
    held = process.memoryUsage().arrayBuffers - before;
  }
  return held;
}

test('the cache of recent batches holds what its bound says: small batches pin no shared buffer pool', async () => {
  // Node hands out small Buffer.allocUnsafe()s as slices of shared 8 KiB slabs: a cached batch
  // of 100 bytes cut from one would keep the whole slab, with whatever else the process cut
  // from it (gRPC frames, protobuf), alive for as long as the batch stays cached.
  using dir = tempDir();
  const bound = 64 * 1024;
  const log = await openLog(dir.path, bound);
  try {
    assert.ok(collectGarbage(), 'a full collection is available');
    const before = process.memoryUsage().arrayBuffers;
    let garbage = 0;
    for (let i = 0; i < 3000; i++) {
      await log.append([recordOf(i, 100)]);
      // What the rest of a log server cuts from the same pool between two group commits.
      for (let j = 0; j < 4; j++) garbage += Buffer.allocUnsafe(2000).length;
    }
    const limit = 4 * bound;
    const held = await heldAfterCollecting(before, limit);
    assert.ok(garbage > 20 * 1024 * 1024);
    assert.ok(
      held < limit,
      `${(held / 1024).toFixed(0)} KiB of buffers held for a ${bound / 1024} KiB cache`,
    );
    // The cache still serves the newest records (from memory: maxCachedBytes bounds it).
    const newest = await log.read(2990, { maxEntries: 100, maxBytes: 1024 * 1024 });
    assert.deepEqual(
      newest.map((e) => e.lsn),
      Array.from({ length: 11 }, (_, i) => 2990 + i),
    );
    newest.forEach((e) => assert.ok(e.payload.equals(recordOf(e.lsn - 1, 100))));
  } finally {
    await log.close();
  }
});

test('the cache of recent batches lets go of the bytes of every batch it drops, large ones too', async () => {
  using dir = tempDir();
  const bound = 1024 * 1024;
  const log = await openLog(dir.path, bound);
  try {
    assert.ok(collectGarbage(), 'a full collection is available');
    const before = process.memoryUsage().arrayBuffers;
    // 400 batches of 64 KiB: 25 MiB through a cache of 1 MiB, ~384 of them dropped.
    for (let i = 0; i < 400; i++) await log.append([recordOf(i, 64 * 1024)]);
    const limit = 4 * bound;
    const held = await heldAfterCollecting(before, limit);
    assert.ok(
      held < limit,
      `${(held / 1024).toFixed(0)} KiB of buffers held for a ${bound / 1024} KiB cache`,
    );
    const entries = await log.read(1, { maxEntries: 400, maxBytes: 64 * 1024 * 1024 });
    assert.equal(entries.length, 400);
    for (const e of entries) assert.ok(e.payload.equals(recordOf(e.lsn - 1, 64 * 1024)), `record ${e.lsn}`);
  } finally {
    await log.close();
  }
});
