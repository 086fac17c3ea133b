// The partition file on its own (in-process, real files): recovery across the scan's
// chunk boundaries and of records larger than a chunk, and group commit batching
// concurrent appends into fewer fsyncs, and a write error (nothing, part or all of the write on
// disk) recovered from the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { PartitionLog } from '../../src/services/log/partition-log.js';
import { silentLogger } from '../../src/telemetry/logger.js';
import { createRegistry } from '../../src/telemetry/metrics.js';
import { createFaultHooks } from '../../src/services/fault-hooks.js';
import { defineLogHooks } from '../../src/services/log/log-server.js';
import { recordOf, tempDir } from './log-harness.js';

test('reopening recovers every record, across scan chunks and larger than one', async () => {
  using dir = tempDir();
  const file = join(dir.path, 'p.log');
  // Sizes chosen so frames straddle the 1 MiB scan chunk and one record exceeds it.
  const sizes = [10, 300_000, 500_000, 400_000, 1_600_000, 7, 700_000, 123_456, 4];
  const log = await PartitionLog.open({ partition: 0, file, logger: silentLogger });
  for (const [i, size] of sizes.entries()) await log.append([recordOf(i, size)]);
  await log.close();
  appendFileSync(file, Buffer.from([1, 2, 3])); // and a torn tail

  const reopened = await PartitionLog.open({ partition: 0, file, logger: silentLogger });
  try {
    assert.equal(reopened.tailLsn, sizes.length);
    const got: Buffer[] = [];
    for (let lsn = 1; lsn <= sizes.length;) {
      const entries = await reopened.read(lsn, { maxEntries: 1000, maxBytes: 1024 * 1024 });
      assert.ok(entries.length > 0);
      got.push(...entries.map((e) => e.payload));
      lsn += entries.length;
    }
    assert.deepEqual(
      got.map((b) => b.length),
      sizes,
    );
    got.forEach((b, i) => assert.ok(b.equals(recordOf(i, sizes[i]!)), `record ${i + 1}`));
    const next = await reopened.append([Buffer.from('next')]);
    assert.equal(next.firstLsn, sizes.length + 1);
  } finally {
    await reopened.close();
  }
});

test('group commit: concurrent appends share fsyncs, each gets its own LSNs', async () => {
  using dir = tempDir();
  let fsyncs = 0;
  let appended = 0;
  const log = await PartitionLog.open({
    partition: 0,
    file: join(dir.path, 'p.log'),
    logger: silentLogger,
    hooks: { onFsync: () => fsyncs++, onAppended: (n) => (appended += n) },
  });
  try {
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) => log.append([recordOf(i, 50), recordOf(i, 60)])),
    );
    const lsns = results.flatMap((r) => [r.firstLsn, r.lastLsn]).sort((a, b) => a - b);
    assert.deepEqual(
      lsns,
      Array.from({ length: 128 }, (_, i) => i + 1),
    );
    assert.equal(appended, 128);
    // The first append flushes alone; everything that queued behind it shares the next flush.
    assert.ok(fsyncs < 64, `${fsyncs} fsyncs for 64 concurrent appends`);
  } finally {
    await log.close();
  }
  await assert.rejects(log.append([Buffer.from('late')]), { code: 'E_STOPPED' });
});

test("an append made from an earlier append's answer is written too, in order; a closed log refuses at once", async () => {
  using dir = tempDir();
  const log = await PartitionLog.open({ partition: 0, file: join(dir.path, 'p.log'), logger: silentLogger });
  const firsts: number[] = [];
  try {
    // Each answer makes the next append from inside the group commit's loop, when no other
    // append is queued: the loop must still write it (else the chain stops, and the wait below
    // fails after 5 s).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve, reject) => {
        const next = (i: number): void =>
          log.enqueue([recordOf(i, 20)], (err, firstLsn) => {
            if (err !== undefined) return reject(err);
            firsts.push(firstLsn);
            if (i < 4) next(i + 1);
            else resolve();
          });
        next(0);
      }),
      new Promise<void>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`appends stopped after LSNs ${firsts.join(', ')}`)), 5000);
      }),
    ]).finally(() => clearTimeout(timer));
    assert.deepEqual(firsts, [1, 2, 3, 4, 5]);
    const entries = await log.read(1, { maxEntries: 10, maxBytes: 1 << 20 });
    entries.forEach((e, i) => assert.ok(e.payload.equals(recordOf(i, 20)), `record ${i + 1}`));
  } finally {
    await log.close();
  }
  assert.throws(
    () => log.enqueue([Buffer.from('late')], () => assert.fail('a refused append is never answered')),
    { code: 'E_STOPPED' },
  );
});

test('appends beyond the pending bound are refused as overloaded, the rest stay gap-free', async () => {
  using dir = tempDir();
  const log = await PartitionLog.open({
    partition: 0,
    file: join(dir.path, 'p.log'),
    logger: silentLogger,
    maxPendingBytes: 1000,
  });
  try {
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => log.append([recordOf(i, 100)])),
    );
    const refused = results.filter((r) => r.status === 'rejected');
    assert.ok(refused.length > 0, 'some appends were refused');
    for (const r of refused) assert.equal((r.reason as { code: string }).code, 'E_OVERLOADED');
    const lsns = results
      .flatMap((r) => (r.status === 'fulfilled' ? [r.value.firstLsn] : []))
      .sort((a, b) => a - b);
    assert.deepEqual(
      lsns,
      Array.from({ length: lsns.length }, (_, i) => i + 1),
    );
    assert.equal(log.tailLsn, lsns.length);
  } finally {
    await log.close();
  }
});

test('reads of recent records come from memory, older ones from the file, the same bytes either way', async () => {
  using dir = tempDir();
  const file = join(dir.path, 'p.log');
  // A small cache: the first records fall out of it, the last stay; reads span both.
  const log = await PartitionLog.open({ partition: 0, file, logger: silentLogger, maxCachedBytes: 4096 });
  const n = 60;
  for (let i = 0; i < n; i += 3)
    await log.append([recordOf(i, 100), recordOf(i + 1, 150), recordOf(i + 2, 50)]);
  try {
    for (const [from, max] of [
      [1, 1000],
      [n - 5, 3],
      [n - 30, 1000],
      [20, 7],
    ] as const) {
      const entries = await log.read(from, { maxEntries: max, maxBytes: 1024 * 1024 });
      assert.ok(entries.length > 0);
      for (const e of entries) {
        const i = e.lsn - 1;
        const size = i % 3 === 0 ? 100 : i % 3 === 1 ? 150 : 50;
        assert.ok(e.payload.equals(recordOf(i, size)), `record ${e.lsn} read from ${from}`);
      }
    }
  } finally {
    await log.close();
  }
  // What memory served is what the file holds.
  const reopened = await PartitionLog.open({ partition: 0, file, logger: silentLogger, maxCachedBytes: 0 });
  try {
    const fromFile = await reopened.read(1, { maxEntries: 1000, maxBytes: 1024 * 1024 });
    assert.equal(fromFile.length, n);
    fromFile.forEach((e, i) =>
      assert.ok(e.payload.equals(recordOf(i, i % 3 === 0 ? 100 : i % 3 === 1 ? 150 : 50))),
    );
  } finally {
    await reopened.close();
  }
});

test('the cache of recent batches stays right while thousands fall out of it', async () => {
  using dir = tempDir();
  const file = join(dir.path, 'p.log');
  // One record a batch, ~40 batches in the cache: 3,000 appends drop ~2,960 of them, past
  // the point where dropped entries are cut off the cache's array in one go (1,024).
  const log = await PartitionLog.open({ partition: 0, file, logger: silentLogger, maxCachedBytes: 40 * 400 });
  const sizeOf = (i: number): number => 20 + (i % 7) * 10;
  const n = 3000;
  try {
    for (let i = 0; i < n; i++) {
      await log.append([recordOf(i, sizeOf(i))]);
      if (i % 250 !== 249) continue;
      // Now and then a read of the newest records, of ones just out of the cache, and across.
      for (const from of [i + 1 - 5, i + 1 - 60, 1]) {
        const entries = await log.read(from, { maxEntries: 70, maxBytes: 1024 * 1024 });
        assert.equal(entries[0]?.lsn, from);
        for (const e of entries)
          assert.ok(e.payload.equals(recordOf(e.lsn - 1, sizeOf(e.lsn - 1))), `record ${e.lsn}`);
      }
    }
    const all = await log.read(1, { maxEntries: n, maxBytes: 64 * 1024 * 1024 });
    assert.equal(all.length, n);
    for (const e of all)
      assert.ok(e.payload.equals(recordOf(e.lsn - 1, sizeOf(e.lsn - 1))), `record ${e.lsn}`);
  } finally {
    await log.close();
  }
});

/** A partition log with the log server's own fault hooks, recovering 50 ms after a failed write. */
async function logWithHooks(file: string) {
  const faultHooks = createFaultHooks(createRegistry());
  const hooks = defineLogHooks(faultHooks);
  const log = await PartitionLog.open({
    partition: 0,
    file,
    logger: silentLogger,
    writeError: hooks.writeError,
    recoverAfterMs: 50,
  });
  return { log, faultHooks };
}

/** Appends until one is taken (the partition recovered), bounded. */
async function appendOnceRecovered(log: PartitionLog, record: Buffer): Promise<number> {
  const deadline = performance.now() + 5000;
  for (;;) {
    try {
      return (await log.append([record])).firstLsn;
    } catch (err) {
      assert.equal((err as { code?: string }).code, 'E_LOG_FAILED');
      if (performance.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

async function readAll(log: PartitionLog): Promise<Buffer[]> {
  const got: Buffer[] = [];
  for (let lsn = 1; lsn <= log.tailLsn;) {
    const entries = await log.read(lsn, { maxEntries: 1000, maxBytes: 1024 * 1024 });
    assert.ok(entries.length > 0);
    got.push(...entries.map((e) => Buffer.from(e.payload)));
    lsn += entries.length;
  }
  return got;
}

for (const [written, found] of [
  ['none', 0],
  ['torn', 2],
  ['all', 3],
] as const) {
  test(`a write error (${written} of the write on disk) fails the appends, refuses more, and the partition recovers from its file`, async () => {
    using dir = tempDir();
    const file = join(dir.path, 'p.log');
    const { log, faultHooks } = await logWithHooks(file);
    try {
      for (let i = 0; i < 3; i++) await log.append([recordOf(i, 100 + i)]);
      faultHooks.switchOn('log.write-error', { written });
      // Three appends in one group commit: the write fails, each is answered with the error.
      const failed = await Promise.allSettled([3, 4, 5].map((i) => log.append([recordOf(i, 200 + i)])));
      assert.deepEqual(
        failed.map((r) => r.status),
        ['rejected', 'rejected', 'rejected'],
      );
      assert.match(String((failed[0] as PromiseRejectedResult).reason), /partition 0: EIO: i\/o error/);
      // Failed: refused at once until it has recovered.
      assert.throws(() => log.enqueue([recordOf(9, 10)], () => undefined), { code: 'E_LOG_FAILED' });
      assert.equal(faultHooks.switchOff('log.write-error').hits, 1);
      // Recovered from the file: the durable records and the failed write's whole frames.
      const next = await appendOnceRecovered(log, recordOf(6, 50));
      assert.equal(next, 3 + found + 1);
      const expected = [0, 1, 2].map((i) => recordOf(i, 100 + i));
      for (let i = 0; i < found; i++) expected.push(recordOf(3 + i, 203 + i));
      expected.push(recordOf(6, 50));
      const got = await readAll(log);
      assert.deepEqual(
        got.map((b) => b.length),
        expected.map((b) => b.length),
      );
      got.forEach((b, i) => assert.ok(b.equals(expected[i]!), `record ${i + 1}`));
    } finally {
      await log.close();
    }
    // A restart finds the same: nothing torn is left in the file.
    const reopened = await PartitionLog.open({ partition: 0, file, logger: silentLogger });
    try {
      assert.equal(reopened.tailLsn, 3 + found + 1);
    } finally {
      await reopened.close();
    }
  });
}

test('closing a partition whose recovery is due ends at once, and nothing recovers after', async () => {
  using dir = tempDir();
  const { log, faultHooks } = await logWithHooks(join(dir.path, 'p.log'));
  await log.append([recordOf(0, 10)]);
  faultHooks.switchOn('log.write-error', { written: 'all' });
  await assert.rejects(log.append([recordOf(1, 10)]), /EIO/);
  const started = performance.now();
  await log.close();
  assert.ok(performance.now() - started < 1000);
  assert.throws(() => log.enqueue([recordOf(2, 10)], () => undefined), { code: 'E_STOPPED' });
});

test('the write-error hook refuses bad parameters with a message', () => {
  const faultHooks = createFaultHooks(createRegistry());
  defineLogHooks(faultHooks);
  assert.throws(
    () => faultHooks.switchOn('log.write-error', { written: 'some' }),
    /written: one of none, torn, all/,
  );
});
