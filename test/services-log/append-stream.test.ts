// The log client's batches travel over one Log.AppendStream (append-stream.ts), against a real
// `limbo serve log`: many batches share one stream; a batch refused as a whole is answered
// item by item and the stream goes on; a log killed mid-append fails the waiting appends
// UNAVAILABLE and the next append opens a new stream to the restarted log; close() cancels.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogClient, grpc } from '../../src/transport/grpc.js';
import type { AppendBatchRequest, AppendBatchResponse } from '../../src/protocol/wire.js';
import { crash, grpcAddress, sleep, startLog, tempDir } from './log-harness.js';

const codeOf = (err: unknown): number | undefined => (err as grpc.ServiceError).code;

test('many batches go over one stream; a batch refused as a whole is answered item by item and the stream goes on', async (t) => {
  const dir = tempDir();
  t.after(() => dir[Symbol.dispose]());
  const log = await startLog(dir.path, ['--partitions', '2']);
  t.after(() => log.stop());
  const client = createLogClient(grpcAddress(log));
  t.after(() => client.close());
  for (let round = 0; round < 20; round++)
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        client.append({ partition: i % 2, records: [Buffer.from(`r${round}.${i}`)] }, { timeoutMs: 10_000 }),
      ),
    );
  const stats = client.appendStats;
  assert.equal(stats.appends, 200);
  assert.ok(stats.calls >= 20, `${stats.calls} batches`);
  assert.equal(stats.streams, 1, 'every batch went over the one stream');

  // The raw stream: a batch over the item limit fails item by item; the next batch lands.
  const raw = (
    client.channel as unknown as Record<
      string,
      (md: grpc.Metadata) => grpc.ClientDuplexStream<AppendBatchRequest, AppendBatchResponse>
    >
  ).appendStream!.call(client.channel, new grpc.Metadata());
  const answers: AppendBatchResponse[] = [];
  raw.on('data', (r: AppendBatchResponse) => answers.push(r));
  raw.on('error', () => {});
  const item = { partition: 0, records: [Buffer.from('x')], traceparent: '' };
  raw.write({ batchId: 7, items: Array.from({ length: 4097 }, () => item) });
  raw.write({ batchId: 8, items: [item] });
  for (let i = 0; i < 100 && answers.length < 2; i++) await sleep(50);
  raw.end();
  const byId = new Map(answers.map((a) => [Number(a.batchId), a]));
  const refused = byId.get(7);
  assert.equal(refused?.results.length, 4097);
  assert.ok(
    refused.results.every(
      (r) => r.code === Number(grpc.status.INVALID_ARGUMENT) && /at most 4096/.test(r.message),
    ),
  );
  const landed = byId.get(8);
  assert.equal(landed?.results[0]?.code, 0);
  assert.ok(landed.results[0].firstLsn > 0);
});

test('a log killed mid-append fails the waiting appends UNAVAILABLE; the next append opens a new stream', async (t) => {
  const dir = tempDir();
  t.after(() => dir[Symbol.dispose]());
  let log = await startLog(dir.path, ['--partitions', '1']);
  const port = new URL(`http://${grpcAddress(log)}`).port;
  t.after(() => log.stop());
  const client = createLogClient(grpcAddress(log));
  t.after(() => client.close());
  await client.append({ partition: 0, records: [Buffer.from('before')] }, { timeoutMs: 5000 });
  // Frozen, the server holds the next appends unanswered; then it dies.
  process.kill(log.pid, 'SIGSTOP');
  const waiting = Array.from({ length: 5 }, (_, i) =>
    client.append({ partition: 0, records: [Buffer.from(`w${i}`)] }, { timeoutMs: 20_000 }).then(
      () => 0,
      (err: unknown) => codeOf(err),
    ),
  );
  await sleep(200);
  const t0 = performance.now();
  await crash(log);
  const codes = await Promise.all(waiting);
  assert.deepEqual(codes, Array(5).fill(grpc.status.UNAVAILABLE), 'each waiting append failed UNAVAILABLE');
  assert.ok(performance.now() - t0 < 5000, 'at once, not at their deadlines');
  log = await startLog(dir.path, ['--partitions', '1', '--port', port]);
  let res: { firstLsn: number } | undefined;
  for (let i = 0; i < 50 && res === undefined; i++) {
    res = await client
      .append({ partition: 0, records: [Buffer.from('after')] }, { timeoutMs: 2000 })
      .catch(() => undefined);
    if (res === undefined) await sleep(100);
  }
  assert.ok(res !== undefined && res.firstLsn >= 2, 'the restarted log takes appends from the same client');
  assert.ok(client.appendStats.streams >= 2, `a new stream (${client.appendStats.streams} opened)`);
});

test('close() answers appends still waiting CANCELLED, and later appends fail at once', async (t) => {
  const dir = tempDir();
  t.after(() => dir[Symbol.dispose]());
  const log = await startLog(dir.path, ['--partitions', '1']);
  t.after(async () => {
    process.kill(log.pid, 'SIGCONT');
    await log.stop();
  });
  const client = createLogClient(grpcAddress(log));
  await client.append({ partition: 0, records: [Buffer.from('warm')] }, { timeoutMs: 5000 });
  process.kill(log.pid, 'SIGSTOP');
  const pending = client.append({ partition: 0, records: [Buffer.from('p')] }, { timeoutMs: 20_000 }).then(
    () => 0,
    (err: unknown) => codeOf(err),
  );
  await sleep(100);
  client.close();
  assert.equal(await pending, grpc.status.CANCELLED);
  const later = await client.append({ partition: 0, records: [Buffer.from('l')] }, { timeoutMs: 1000 }).then(
    () => 0,
    (err: unknown) => codeOf(err),
  );
  assert.equal(later, grpc.status.CANCELLED);
});
