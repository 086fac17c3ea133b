// The log client sends the appends its callers make together as AppendBatch calls, and each
// append is still answered on its own: its own LSNs, its own error, its own cancel and
// deadline — against a real `limbo serve log` process (paused with SIGSTOP for the deadline).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogClient, grpc, type LogClient } from '../../src/transport/grpc.js';
import type { StartedProcess } from '../../src/runtime/process.js';
import { collectEntries, grpcAddress, startLog, tempDir } from './log-harness.js';

const dir = tempDir();
let log: StartedProcess;
let client: LogClient;

before(async () => {
  log = await startLog(dir.path, ['--partitions', '3']);
  client = createLogClient(grpcAddress(log));
});

after(async () => {
  client?.close();
  await log?.stop();
  dir[Symbol.dispose]();
});

function codeOf(err: unknown): number | undefined {
  return (err as grpc.ServiceError).code;
}

test('300 concurrent appends on one client: fewer calls than appends, each its own gap-free LSNs', async () => {
  const before = client.appendStats;
  const tails = await Promise.all([0, 1].map((p) => client.getTail({ partition: p }, { timeoutMs: 5000 })));
  const results = await Promise.all(
    Array.from({ length: 300 }, (_, i) =>
      client
        .append({ partition: i % 2, records: [Buffer.from(`r${i}`)] }, { timeoutMs: 10_000 })
        .then((res) => ({ i, ...res })),
    ),
  );
  const stats = client.appendStats;
  assert.equal(stats.appends - before.appends, 300);
  assert.ok(stats.calls - before.calls < 300 / 4, `300 appends went in ${stats.calls - before.calls} calls`);
  for (const p of [0, 1]) {
    const mine = results.filter((r) => r.i % 2 === p);
    const lsns = mine.map((r) => r.firstLsn).sort((a, b) => a - b);
    const start = tails[p]!.tailLsn + 1;
    assert.deepEqual(
      lsns,
      Array.from({ length: 150 }, (_, k) => start + k),
      `partition ${p}: each append got its own LSN, none twice, no gaps`,
    );
    for (const r of mine) assert.equal(r.lastLsn, r.firstLsn);
    // What each LSN holds is what that append sent.
    const entries = await collectEntries(client.read({ partition: p, fromLsn: start }), 150, 10_000);
    const byLsn = new Map(entries.map((e) => [e.lsn, e.payload.toString()]));
    for (const r of mine) assert.equal(byLsn.get(r.firstLsn), `r${r.i}`);
  }
});

test('in one batch a bad append fails alone with its own status; the others land', async () => {
  const before = client.appendStats;
  const [good0, bad, empty, good1] = await Promise.allSettled([
    client.append({ partition: 0, records: [Buffer.from('ok-0')] }, { timeoutMs: 5000 }),
    client.append({ partition: 9, records: [Buffer.from('x')] }, { timeoutMs: 5000 }),
    client.append({ partition: 1, records: [] }, { timeoutMs: 5000 }),
    client.append({ partition: 1, records: [Buffer.from('ok-1')] }, { timeoutMs: 5000 }),
  ]);
  assert.equal(client.appendStats.calls - before.calls, 1, 'the four appends travelled in one call');
  assert.equal(good0.status, 'fulfilled');
  assert.equal(good1.status, 'fulfilled');
  assert.equal(bad.status, 'rejected');
  assert.equal(codeOf(bad.reason), grpc.status.INVALID_ARGUMENT);
  assert.match((bad.reason as grpc.ServiceError).details, /unknown partition 9 \(partitions 0\.\.2\)/);
  assert.match((bad.reason as Error).message, /^3 INVALID_ARGUMENT: unknown partition 9/);
  assert.equal(empty.status, 'rejected');
  assert.match((empty.reason as grpc.ServiceError).details, /carries no records/);
});

test('an append aborted while queued is answered CANCELLED and never written; its neighbours land', async () => {
  const ac = new AbortController();
  const tail = (await client.getTail({ partition: 2 }, { timeoutMs: 5000 })).tailLsn;
  const kept = client.append({ partition: 2, records: [Buffer.from('kept')] }, { timeoutMs: 5000 });
  const dropped = client.append(
    { partition: 2, records: [Buffer.from('dropped')] },
    { timeoutMs: 5000, signal: ac.signal },
  );
  ac.abort();
  await assert.rejects(dropped, (err: unknown) => codeOf(err) === grpc.status.CANCELLED);
  const res = await kept;
  assert.equal(res.firstLsn, tail + 1);
  assert.equal((await client.getTail({ partition: 2 }, { timeoutMs: 5000 })).tailLsn, tail + 1);
  await assert.rejects(
    client.append({ partition: 2, records: [Buffer.from('late')] }, { signal: ac.signal }),
    (err: unknown) => codeOf(err) === grpc.status.CANCELLED,
    'an already-aborted signal is refused at once',
  );
});

test('each append keeps its own deadline while the server does not answer', async () => {
  // Warm the connection, then freeze the server: nothing it holds can be answered.
  await client.append({ partition: 0, records: [Buffer.from('warm')] }, { timeoutMs: 5000 });
  process.kill(log.pid, 'SIGSTOP');
  try {
    const t0 = performance.now();
    const short = client.append({ partition: 0, records: [Buffer.from('s')] }, { timeoutMs: 300 });
    const long = client.append({ partition: 0, records: [Buffer.from('l')] }, { timeoutMs: 1500 });
    const ends = await Promise.allSettled(
      [short, long].map((p) =>
        p.then(
          () => ({ ok: true, ms: performance.now() - t0, code: 0 }),
          (err: unknown) => ({ ok: false, ms: performance.now() - t0, code: codeOf(err) }),
        ),
      ),
    );
    const [s, l] = ends.map((e) => (e.status === 'fulfilled' ? e.value : undefined));
    assert.equal(s?.code, grpc.status.DEADLINE_EXCEEDED);
    assert.equal(l?.code, grpc.status.DEADLINE_EXCEEDED);
    assert.ok(s.ms >= 280 && s.ms < 1200, `the 300 ms append ended after ${s.ms.toFixed(0)} ms`);
    assert.ok(l.ms >= 1450 && l.ms < 3000, `the 1500 ms append ended after ${l.ms.toFixed(0)} ms`);
  } finally {
    process.kill(log.pid, 'SIGCONT');
  }
  const res = await client.append({ partition: 0, records: [Buffer.from('after')] }, { timeoutMs: 5000 });
  assert.ok(res.firstLsn > 0, 'the client serves again once the server does');
});
