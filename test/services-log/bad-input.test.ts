// Bad input gets a clear error and the server keeps serving: unknown partitions,
// oversized records, empty appends, undecodable requests; bad options exit with status 2
// and a message naming the option.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createControllerClient, createLogClient, grpc, type LogClient } from '../../src/transport/grpc.js';
import type { StartedProcess } from '../../src/runtime/process.js';
import { collectEntries, grpcAddress, runLogExpectingExit, startLog, tempDir } from './log-harness.js';

const dir = tempDir();
let log: StartedProcess;
let client: LogClient;

before(async () => {
  log = await startLog(dir.path, ['--partitions', '2', '--max-record-bytes', '1024']);
  client = createLogClient(grpcAddress(log));
});

after(async () => {
  client?.close();
  await log?.stop();
  dir[Symbol.dispose]();
});

function invalid(pattern: RegExp): (err: unknown) => boolean {
  return (err: unknown) => {
    const e = err as grpc.ServiceError;
    assert.equal(e.code, grpc.status.INVALID_ARGUMENT, String(err));
    assert.match(e.details, pattern);
    return true;
  };
}

async function stillServes(): Promise<void> {
  const res = await client.append({ partition: 1, records: [Buffer.from('ok')] }, { timeoutMs: 5000 });
  assert.ok(res.firstLsn >= 1);
}

test('unknown partition: INVALID_ARGUMENT naming the range, on every call', async () => {
  const unknown = /unknown partition 7 \(partitions 0\.\.1\)/;
  await assert.rejects(
    client.append({ partition: 7, records: [Buffer.from('x')] }, { timeoutMs: 5000 }),
    invalid(unknown),
  );
  await assert.rejects(client.getTail({ partition: 7 }, { timeoutMs: 5000 }), invalid(unknown));
  await assert.rejects(collectEntries(client.read({ partition: 7, fromLsn: 1 }), 1, 5000), invalid(unknown));
  await assert.rejects(
    collectEntries(client.read({ partition: 0, fromLsn: 1, batchDelayMs: 1001 }), 1, 5000),
    invalid(/batchDelayMs: at most 1000 ms/),
  );
  const controller = createControllerClient(grpcAddress(log));
  try {
    await assert.rejects(
      controller.heartbeat({ node: 'n', address: 'a:1', partitions: [0, 7] }, { timeoutMs: 5000 }),
      invalid(unknown),
    );
    await assert.rejects(
      controller.heartbeat({ node: '', address: 'a:1', partitions: [] }, { timeoutMs: 5000 }),
      invalid(/needs a node name/),
    );
    await assert.rejects(
      controller.compareAndSwapLeader(
        { partition: 7, expectedEpoch: 0, leaderNode: 'n' },
        { timeoutMs: 5000 },
      ),
      invalid(unknown),
    );
  } finally {
    controller.close();
  }
  await stillServes();
});

test('oversized record: INVALID_ARGUMENT with the limit, nothing appended', async () => {
  const tail = (await client.getTail({ partition: 0 }, { timeoutMs: 5000 })).tailLsn;
  await assert.rejects(
    client.append({ partition: 0, records: [Buffer.from('small'), Buffer.alloc(1025)] }, { timeoutMs: 5000 }),
    invalid(/record 1 is 1025 bytes, over the limit of 1024 bytes \(--max-record-bytes\)/),
  );
  assert.equal(
    (await client.getTail({ partition: 0 }, { timeoutMs: 5000 })).tailLsn,
    tail,
    'no partial append',
  );
  const res = await client.append({ partition: 0, records: [Buffer.alloc(1024)] }, { timeoutMs: 5000 });
  assert.equal(res.firstLsn, tail + 1, 'a record of exactly the limit is fine');
});

test('empty append: INVALID_ARGUMENT', async () => {
  await assert.rejects(
    client.append({ partition: 0, records: [] }, { timeoutMs: 5000 }),
    invalid(/carries no records/),
  );
  await stillServes();
});

test('an undecodable request fails alone; the server keeps serving', async () => {
  const raw = new grpc.Client(grpcAddress(log), grpc.credentials.createInsecure());
  try {
    const err = await new Promise<grpc.ServiceError | null>((resolve) => {
      raw.makeUnaryRequest(
        '/limbo.v1.Log/Append',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
        { deadline: Date.now() + 5000 },
        (e) => resolve(e),
      );
    });
    assert.ok(err, 'a malformed message is refused');
    assert.notEqual(err.code, grpc.status.OK);
  } finally {
    raw.close();
  }
  await stillServes();
});

test('bad options exit with status 2 and name the option', async () => {
  using scratch = tempDir();
  const aFile = join(scratch.path, 'a-file');
  writeFileSync(aFile, 'not a directory');
  const cases: { args: string[]; env?: NodeJS.ProcessEnv; message: RegExp }[] = [
    { args: [], message: /--data-dir is required/ },
    { args: ['--data-dir', join(aFile, 'sub')], message: /--data-dir: cannot use/ },
    { args: ['--data-dir', scratch.path, '--port', 'abc'], message: /--port: expected an integer/ },
    { args: ['--data-dir', scratch.path, '--partitions', '0'], message: /--partitions: must be at least 1/ },
    {
      args: ['--data-dir', scratch.path, '--max-record-bytes', '-5'],
      message: /--max-record-bytes: must be at least 1/,
    },
    {
      args: ['--data-dir', scratch.path],
      env: { LIMBO_FAILURE_TIMEOUT_MS: 'soon' },
      message: /LIMBO_FAILURE_TIMEOUT_MS: expected an integer/,
    },
    { args: ['--data-dir', scratch.path, '--bogus'], message: /unknown option --bogus/ },
    // A second server on the data dir of a running one would corrupt its logs.
    { args: ['--data-dir', dir.path], message: new RegExp(`--data-dir: .* in use by process ${log.pid}`) },
  ];
  await Promise.all(
    cases.map(async (c) => {
      const res = await runLogExpectingExit(c.args, c.env);
      assert.equal(res.code, 2, `${c.args.join(' ')}: exit ${res.code}, stderr: ${res.stderr}`);
      assert.match(res.stderr, c.message);
    }),
  );
  await stillServes();
  const entries = await collectEntries(client.read({ partition: 1, fromLsn: 1 }), 1, 5000);
  assert.equal(entries[0]?.payload.toString(), 'ok');
});
