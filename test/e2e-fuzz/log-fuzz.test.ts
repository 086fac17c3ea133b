// The log server's gRPC API under bad input: a real log server (child process), called with
// unknown partitions, bad epochs, empty, oversized and undecodable messages, over-long
// names. Every call must end with a status (never the client's own deadline: that would
// mean the server left it hanging), the server keeps serving, and good calls work after.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { startLimboService, type StartedProcess } from '../../src/runtime/process.js';
import {
  createControllerClient,
  createLogClient,
  grpc,
  type ControllerClient,
  type LogClient,
} from '../../src/transport/grpc.js';
import { limits } from '../../src/protocol/limits.js';

const PARTITIONS = 2;
/** The client's deadline on each call: a server that answers never reaches it. */
const CALL_MS = 4000;
const S = grpc.status;

let dir: string;
let log: StartedProcess;
let address: string;
let logClient: LogClient;
let controller: ControllerClient;
let raw: grpc.Client;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'limbo-fuzz-log-'));
  log = await startLimboService('log', ['--data-dir', dir, '--partitions', String(PARTITIONS)], {
    name: 'log',
  });
  address = log.ready.addresses.grpc as string;
  // Big enough to send what the server must refuse.
  const big = { 'grpc.max_send_message_length': 64 * 1024 * 1024 };
  logClient = createLogClient(address, big);
  controller = createControllerClient(address, big);
  raw = new grpc.Client(address, grpc.credentials.createInsecure(), big);
});
after(async () => {
  logClient?.close();
  controller?.close();
  raw?.close();
  await log?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The gRPC status a call ends with ('ok' for success). */
async function statusOf(p: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return (e as { code?: number }).code ?? -1;
  }
}

/** A unary call with arbitrary request bytes (not necessarily a valid protobuf message). */
function rawUnary(method: string, bytes: Buffer): Promise<unknown> {
  return new Promise((resolve, reject) => {
    raw.makeUnaryRequest(
      method,
      (b: Buffer) => b,
      (b: Buffer) => b,
      bytes,
      new grpc.Metadata(),
      { deadline: Date.now() + CALL_MS },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
}

/** The first status of a server stream (its first message counts as 'ok'). */
function firstOfStream(stream: grpc.ClientReadableStream<unknown>): Promise<number | 'ok'> {
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      stream.cancel();
      resolve(S.DEADLINE_EXCEEDED);
    }, CALL_MS);
    stream.on('data', () => {
      clearTimeout(t);
      stream.cancel();
      resolve('ok');
    });
    stream.on('error', (e: { code?: number }) => {
      clearTimeout(t);
      resolve(e.code ?? -1);
    });
  });
}

const opts = { timeoutMs: CALL_MS };
const rec = (n: number): Buffer => Buffer.alloc(n, 0x61);

interface Case {
  name: string;
  run: () => Promise<number | 'ok'>;
  expect: (number | 'ok')[];
}

const cases: Case[] = [
  {
    name: 'Append to an unknown partition',
    run: () => statusOf(logClient.append({ partition: 99, records: [rec(1)] }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'Append to partition 2^32-1',
    run: () => statusOf(logClient.append({ partition: 0xffffffff, records: [rec(1)] }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'Append with no records',
    run: () => statusOf(logClient.append({ partition: 0, records: [] }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'Append of a record over the record limit',
    run: () => statusOf(logClient.append({ partition: 0, records: [rec(1024 * 1024 + 1)] }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'Append of too many records',
    run: () =>
      statusOf(
        logClient.append(
          { partition: 0, records: Array.from({ length: limits.appendRecordsMax + 1 }, () => rec(1)) },
          opts,
        ),
      ),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'Append of a message over the message limit',
    run: () => statusOf(logClient.append({ partition: 0, records: [rec(17 * 1024 * 1024)] }, opts)),
    expect: [S.RESOURCE_EXHAUSTED],
  },
  {
    name: 'Append of undecodable bytes',
    run: () => statusOf(rawUnary('/limbo.v1.Log/Append', Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]))),
    expect: [S.INTERNAL, S.INVALID_ARGUMENT],
  },
  {
    name: 'Append of a truncated message',
    run: () => statusOf(rawUnary('/limbo.v1.Log/Append', Buffer.from([0x12, 0x64, 0x61]))),
    expect: [S.INTERNAL, S.INVALID_ARGUMENT],
  },
  {
    name: 'an unknown method',
    run: () => statusOf(rawUnary('/limbo.v1.Log/Nope', Buffer.alloc(0))),
    expect: [S.UNIMPLEMENTED],
  },
  {
    name: 'an unknown service',
    run: () => statusOf(rawUnary('/nope.Nope/Append', Buffer.alloc(0))),
    expect: [S.UNIMPLEMENTED],
  },
  {
    name: 'GetTail of an unknown partition',
    run: () => statusOf(logClient.getTail({ partition: 7 }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'Read of an unknown partition',
    run: () => firstOfStream(logClient.read({ partition: 42, fromLsn: 1 })),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'Heartbeat without a node',
    run: () => statusOf(controller.heartbeat({ node: '', address: 'a:1', partitions: [] }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'Heartbeat with an over-long node',
    run: () =>
      statusOf(controller.heartbeat({ node: 'n'.repeat(10_000), address: 'a:1', partitions: [] }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'Heartbeat with an over-long address',
    run: () =>
      statusOf(controller.heartbeat({ node: 'fuzz', address: 'a'.repeat(100_000), partitions: [] }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'Heartbeat for an unknown partition',
    run: () => statusOf(controller.heartbeat({ node: 'fuzz', address: 'a:1', partitions: [5] }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'Heartbeat listing too many partitions',
    run: () =>
      statusOf(
        controller.heartbeat(
          {
            node: 'fuzz',
            address: 'a:1',
            partitions: Array.from({ length: limits.heartbeatPartitionsMax + 1 }, () => 0),
          },
          opts,
        ),
      ),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'CompareAndSwapLeader of an unknown partition',
    run: () =>
      statusOf(controller.compareAndSwapLeader({ partition: 9, expectedEpoch: 0, leaderNode: 'x' }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'CompareAndSwapLeader with a wrong epoch',
    run: () =>
      statusOf(controller.compareAndSwapLeader({ partition: 0, expectedEpoch: 1e15, leaderNode: 'x' }, opts)),
    expect: ['ok'],
  },
  {
    name: 'CompareAndSwapLeader with an over-long leader',
    run: () =>
      statusOf(
        controller.compareAndSwapLeader(
          { partition: 0, expectedEpoch: 0, leaderNode: 'n'.repeat(5000) },
          opts,
        ),
      ),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'TransferLeadership to nobody',
    run: () => statusOf(controller.transferLeadership({ partition: 0, node: '' }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'TransferLeadership to an unknown node',
    run: () => statusOf(controller.transferLeadership({ partition: 0, node: 'ghost' }, opts)),
    expect: [S.FAILED_PRECONDITION],
  },
  {
    name: 'TransferLeadership of an unknown partition',
    run: () => statusOf(controller.transferLeadership({ partition: 77, node: 'ghost' }, opts)),
    expect: [S.INVALID_ARGUMENT],
  },
  {
    name: 'WatchPartitionTable with an over-long watcher',
    run: () => firstOfStream(controller.watchPartitionTable({ watcher: 'w'.repeat(5000) })),
    expect: [S.INVALID_ARGUMENT],
  },
];

test('every bad gRPC call ends with a status, never the client deadline', async () => {
  const wrong: string[] = [];
  for (const c of cases) {
    const got = await c.run();
    if (!c.expect.includes(got)) wrong.push(`${c.name}: expected ${c.expect.join('|')}, got ${got}`);
  }
  assert.deepEqual(wrong, []);
});

test('HTTP/1.1 and garbage bytes on the gRPC port get a clean close within a bound', async () => {
  const port = Number(address.split(':').pop());
  for (const bytes of ['GET / HTTP/1.1\r\nHost: x\r\n\r\n', '\x00\x01\x02garbage\r\n\r\n']) {
    const closedInMs = await new Promise<number>((resolve) => {
      const started = performance.now();
      const s = net.connect(port, '127.0.0.1', () => s.write(bytes));
      const t = setTimeout(() => {
        s.destroy();
        resolve(Infinity);
      }, 10_000);
      s.on('data', () => undefined);
      s.on('close', () => {
        clearTimeout(t);
        resolve(performance.now() - started);
      });
      s.on('error', () => undefined);
    });
    assert.ok(closedInMs < 10_000, `closed after ${closedInMs} ms`);
  }
});

test('afterwards the log server is up and serves good calls', async () => {
  assert.ok(log.isRunning());
  const { lastLsn } = await logClient.append({ partition: 1, records: [rec(10)] }, opts);
  assert.ok(lastLsn >= 1);
  assert.equal((await logClient.getTail({ partition: 1 }, opts)).tailLsn, lastLsn);
  const table = await controller.getPartitionTable({}, opts);
  assert.equal(table.numPartitions, PARTITIONS);
});
