// Appends from many concurrent clients get distinct, gap-free LSNs per partition and read
// back in order; a tailing reader sees new records as they land.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogClient, type LogClient } from '../../src/transport/grpc.js';
import type { StartedProcess } from '../../src/runtime/process.js';
import { collectEntries, grpcAddress, metricValue, startLog, tempDir } from './log-harness.js';

const dir = tempDir();
let log: StartedProcess;
let clients: LogClient[] = [];

before(async () => {
  log = await startLog(dir.path, ['--partitions', '3']);
  // Several channels, so the appends really arrive concurrently.
  clients = Array.from({ length: 4 }, () => createLogClient(grpcAddress(log)));
});

after(async () => {
  for (const c of clients) c.close();
  await log?.stop();
  dir[Symbol.dispose]();
});

test('concurrent appenders get distinct gap-free LSNs and read back in order', async () => {
  const appenders = 32;
  const appendsEach = 15;
  const partitions = [0, 1];
  const written = new Map<number, Map<number, string>>(partitions.map((p) => [p, new Map()]));
  await Promise.all(
    Array.from({ length: appenders }, async (_, a) => {
      const client = clients[a % clients.length] as LogClient;
      for (let i = 0; i < appendsEach; i++) {
        const partition = partitions[(a + i) % partitions.length] as number;
        const count = 1 + ((a + i) % 3);
        const payloads = Array.from({ length: count }, (_, k) => `a${a}-i${i}-k${k}`);
        const res = await client.append(
          { partition, records: payloads.map((s) => Buffer.from(s)) },
          { timeoutMs: 10_000 },
        );
        assert.equal(res.lastLsn - res.firstLsn + 1, count, 'one LSN per record');
        const byLsn = written.get(partition) as Map<number, string>;
        payloads.forEach((s, k) => {
          assert.equal(byLsn.has(res.firstLsn + k), false, `LSN ${res.firstLsn + k} handed out twice`);
          byLsn.set(res.firstLsn + k, s);
        });
      }
    }),
  );
  for (const p of partitions) {
    const byLsn = written.get(p) as Map<number, string>;
    const total = byLsn.size;
    assert.deepEqual(
      [...byLsn.keys()].sort((x, y) => x - y),
      Array.from({ length: total }, (_, i) => i + 1),
      `partition ${p}: LSNs 1..${total} without gaps`,
    );
    const tail = await clients[0]!.getTail({ partition: p }, { timeoutMs: 5000 });
    assert.equal(tail.tailLsn, total);
    const entries = await collectEntries(clients[1]!.read({ partition: p, fromLsn: 0 }), total, 10_000);
    assert.deepEqual(
      entries.map((e) => e.lsn),
      Array.from({ length: total }, (_, i) => i + 1),
    );
    for (const e of entries) assert.equal(e.payload.toString(), byLsn.get(e.lsn));
  }
  // Reading from the middle starts exactly there.
  const mid = await collectEntries(clients[2]!.read({ partition: 0, fromLsn: 7 }), 3, 10_000);
  assert.deepEqual(
    mid.slice(0, 3).map((e) => e.lsn),
    [7, 8, 9],
  );
  const appended = await metricValue(log.ready.addresses.metrics as string, 'limbo_log_appends_total', {
    partition: '0',
  });
  assert.equal(appended, written.get(0)?.size);
  const durations = await metricValue(
    log.ready.addresses.metrics as string,
    'limbo_log_append_duration_seconds_count',
  );
  assert.equal(durations, appenders * appendsEach);
});

test('a tailing reader sees new records as they land', async () => {
  const partition = 2;
  const client = clients[0] as LogClient;
  const stream = client.read({ partition, fromLsn: 1 });
  const seen: number[] = [];
  const waiters: (() => void)[] = [];
  stream.on('data', (r: { entries: { lsn: number; payload: Buffer }[] }) => {
    for (const e of r.entries) seen.push(e.lsn);
    for (const w of waiters.splice(0)) w();
  });
  stream.on('error', () => {});
  const seenLsn = (lsn: number, timeoutMs: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const deadline = setTimeout(
        () => reject(new Error(`LSN ${lsn} not seen by the tailing reader`)),
        timeoutMs,
      );
      const check = (): void => {
        if (seen.includes(lsn)) {
          clearTimeout(deadline);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  try {
    for (let i = 1; i <= 5; i++) {
      const res = await client.append(
        { partition, records: [Buffer.from(`tail-${i}`)] },
        { timeoutMs: 5000 },
      );
      assert.equal(res.firstLsn, i);
      // Each record reaches the open stream without a new Read.
      await seenLsn(i, 5000);
    }
    assert.deepEqual(seen, [1, 2, 3, 4, 5]);
  } finally {
    stream.cancel();
  }
});

/** Messages a tailing reader of `partition` gets while `appends` one-record appends land, `gapMs` apart. */
async function messagesWhileAppending(
  partition: number,
  batchDelayMs: number | undefined,
  appends: number,
  gapMs: number,
): Promise<number[][]> {
  const client = clients[0] as LogClient;
  const from = (await client.getTail({ partition }, { timeoutMs: 5000 })).tailLsn + 1;
  const stream = client.read({
    partition,
    fromLsn: from,
    ...(batchDelayMs !== undefined ? { batchDelayMs } : {}),
  });
  const messages: number[][] = [];
  let got = 0;
  let wake: (() => void) | undefined;
  stream.on('data', (r: { entries: { lsn: number }[] }) => {
    messages.push(r.entries.map((e) => e.lsn));
    got += r.entries.length;
    wake?.();
  });
  stream.on('error', () => {});
  try {
    for (let i = 0; i < appends; i++) {
      await client.append({ partition, records: [Buffer.from(`b-${i}`)] }, { timeoutMs: 5000 });
      await new Promise((r) => setTimeout(r, gapMs));
    }
    const deadline = Date.now() + 5000;
    while (got < appends && Date.now() < deadline)
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 100);
      });
    assert.deepEqual(
      messages.flat(),
      Array.from({ length: appends }, (_, i) => from + i),
      'every entry once, in order',
    );
    return messages;
  } finally {
    stream.cancel();
  }
}

test('a reader that asks for batching gets what lands within its delay in one message', async () => {
  // Without: one message per append (each lands after the last was sent).
  const prompt = await messagesWhileAppending(1, undefined, 6, 5);
  assert.equal(prompt.length, 6, JSON.stringify(prompt));
  // With 1 s: six appends ~5 ms apart all land within the delay the first one started.
  const batched = await messagesWhileAppending(1, 1000, 6, 5);
  assert.equal(batched.length, 1, JSON.stringify(batched));
});
