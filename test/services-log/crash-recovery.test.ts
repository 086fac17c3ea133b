// kill -9 during a stream of acknowledged appends loses nothing acknowledged; a torn or
// corrupt last record found on restart is cut, never served.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogClient } from '../../src/transport/grpc.js';
import { collectEntries, crash, grpcAddress, sleep, startLog, tempDir } from './log-harness.js';

test('kill -9 during acknowledged appends: every acknowledged record survives, in order', async () => {
  using dir = tempDir();
  const first = await startLog(dir.path, ['--partitions', '2']);
  const acked = new Map<number, string>();
  let stop = false;
  let failures = 0;
  const client = createLogClient(grpcAddress(first));
  const appenders = Array.from({ length: 16 }, async (_, a) => {
    for (let i = 0; !stop; i++) {
      const payload = `w${a}-${i}-${'x'.repeat(i % 50)}`;
      try {
        const res = await client.append(
          { partition: 0, records: [Buffer.from(payload)] },
          { timeoutMs: 5000 },
        );
        acked.set(res.firstLsn, payload);
      } catch {
        failures++;
        return; // the server is gone
      }
    }
  });
  // Let a good number of appends be acknowledged, then crash mid-stream.
  const deadline = Date.now() + 20_000;
  while (acked.size < 300 && Date.now() < deadline) await sleep(20);
  assert.ok(acked.size >= 300, `only ${acked.size} appends acknowledged before the crash`);
  await crash(first);
  stop = true;
  await Promise.all(appenders);
  client.close();
  assert.ok(failures > 0, 'the crash hit appends in flight');

  const second = await startLog(dir.path, ['--partitions', '2']);
  const reader = createLogClient(grpcAddress(second));
  try {
    const { tailLsn } = await reader.getTail({ partition: 0 }, { timeoutMs: 5000 });
    const maxAcked = Math.max(...acked.keys());
    assert.ok(tailLsn >= maxAcked, `tail ${tailLsn} is behind the last acknowledged LSN ${maxAcked}`);
    const entries = await collectEntries(reader.read({ partition: 0, fromLsn: 1 }), tailLsn, 15_000);
    assert.deepEqual(
      entries.map((e) => e.lsn),
      Array.from({ length: tailLsn }, (_, i) => i + 1),
    );
    for (const e of entries) {
      const want = acked.get(e.lsn);
      if (want !== undefined) assert.equal(e.payload.toString(), want, `LSN ${e.lsn}`);
    }
    // And the log takes appends again right after the last record.
    const res = await reader.append({ partition: 0, records: [Buffer.from('after')] }, { timeoutMs: 5000 });
    assert.equal(res.firstLsn, tailLsn + 1);
  } finally {
    reader.close();
    await second.stop();
  }
});

// Three ways a tail can be broken while the server is down.
const damages: { name: string; damage(file: string): void; kept: number }[] = [
  {
    name: 'a partial frame (header promising more bytes than follow)',
    damage: (file) => {
      const header = Buffer.alloc(8);
      header.writeUInt32LE(100, 0);
      header.writeUInt32LE(0xdeadbeef, 4);
      appendFileSync(file, Buffer.concat([header, Buffer.from('only-ten-b')]));
    },
    kept: 5,
  },
  {
    name: 'garbage bytes',
    damage: (file) => appendFileSync(file, Buffer.from('\x00\x00\x00\x00garbage that is not a frame at all')),
    kept: 5,
  },
  {
    name: 'a flipped byte inside the last record',
    damage: (file) => {
      const bytes = readFileSync(file);
      bytes[bytes.length - 2] = (bytes[bytes.length - 2] as number) ^ 0xff;
      writeFileSync(file, bytes);
    },
    kept: 4,
  },
];

for (const d of damages) {
  test(`a torn tail is cut on restart: ${d.name}`, async () => {
    using dir = tempDir();
    const first = await startLog(dir.path, ['--partitions', '1']);
    const client = createLogClient(grpcAddress(first));
    for (let i = 1; i <= 5; i++)
      await client.append({ partition: 0, records: [Buffer.from(`record-${i}`)] }, { timeoutMs: 5000 });
    client.close();
    await crash(first);
    const file = join(dir.path, 'partition-0.log');
    const cleanBytes = statSync(file).size;
    d.damage(file);

    const second = await startLog(dir.path, ['--partitions', '1']);
    const reader = createLogClient(grpcAddress(second));
    try {
      const { tailLsn } = await reader.getTail({ partition: 0 }, { timeoutMs: 5000 });
      assert.equal(tailLsn, d.kept);
      assert.ok(statSync(file).size <= cleanBytes, 'the damaged bytes were cut from the file');
      const res = await reader.append({ partition: 0, records: [Buffer.from('new')] }, { timeoutMs: 5000 });
      assert.equal(res.firstLsn, d.kept + 1);
      const entries = await collectEntries(reader.read({ partition: 0, fromLsn: 1 }), d.kept + 1, 10_000);
      assert.deepEqual(
        entries.map((e) => e.payload.toString()),
        [...Array.from({ length: d.kept }, (_, i) => `record-${i + 1}`), 'new'],
      );
      assert.match(second.tail(), /cut torn or corrupt log tail/);
    } finally {
      reader.close();
      await second.stop();
    }
  });
}
