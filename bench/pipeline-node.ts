// One process of the floor pipeline (pipeline-floor.ts): the reference cluster's message
// shape with nothing else — no gRPC, HTTP/2 or protobuf, no state machine, metrics, tracing,
// deadlines or resends. Frames on raw TCP, written once per tick per socket:
//
//   client ─HTTP─▶ ingress ─submit─▶ processor k ─append─▶ log (O_DSYNC group commit per partition)
//                     ▲                  │  ▲ ◀─ack──────────┘ │
//                     └──────reply───────┘  └── record to all three processors (tail) ◀┘
//
// A call is the cluster's: the leader appends an invoke record, waits until it is durable and
// has come back on its tail, "runs" the handler (echo), appends an end record the same way,
// then replies. Every processor receives every record, as replicas do.
//
//   node pipeline-node.js log <dataDir> <partitions>
//   node pipeline-node.js processor <index> <logPort>
//   node pipeline-node.js ingress <partitions> <processorPort>…
// Each prints the `limbo-ready` line (launch/ready.ts) with its `tcp` address once it listens.
import http from 'node:http';
import net from 'node:net';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { formatReadyLine } from '../src/launch/ready.js';
import { Conn, connectFrames, frameTypes } from './frames.js';
import { exitWithParent } from './parent-watch.js';

const { hello: HELLO, append: APPEND, ack: ACK, record: RECORD, submit: SUBMIT, reply: REPLY } = frameTypes;
function listen(server: net.Server | http.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
}

async function runLog(dataDir: string, partitions: number): Promise<number> {
  const subscribers: Conn[] = [];
  const logs = await Promise.all(
    Array.from({ length: partitions }, async (_, p) => {
      const fh = await open(
        join(dataDir, `p${p}.log`),
        constants.O_WRONLY | constants.O_CREAT | constants.O_DSYNC,
      );
      return {
        fh,
        offset: 0,
        lsn: 0,
        queue: [] as { from: Conn; id: number; payload: Buffer }[],
        writing: false,
      };
    }),
  );
  type PLog = (typeof logs)[number];
  const commit = async (p: number, log: PLog): Promise<void> => {
    log.writing = true;
    while (log.queue.length > 0) {
      const batch = log.queue.splice(0);
      const buf = Buffer.concat(batch.map((a) => a.payload));
      await log.fh.write(buf, 0, buf.length, log.offset);
      log.offset += buf.length;
      for (const a of batch) {
        log.lsn++;
        a.from.send(ACK, a.id, p, Buffer.alloc(0));
        for (const s of subscribers) s.send(RECORD, log.lsn, p, a.payload);
      }
    }
    log.writing = false;
  };
  const server = net.createServer((socket) => {
    new Conn(socket, (f, c) => {
      if (f.type === HELLO) subscribers.push(c);
      else if (f.type === APPEND) {
        const log = logs[f.partition]!;
        log.queue.push({ from: c, id: f.id, payload: Buffer.from(f.payload) });
        if (!log.writing) void commit(f.partition, log);
      }
    });
  });
  return listen(server);
}

async function runProcessor(index: number, logPort: number): Promise<number> {
  // key → what to do once its record is back on the tail (and acknowledged).
  const waiting = new Map<number, { acked: boolean; applied: boolean; then: () => void }>();
  let nextKey = 1;
  const applied = new Array<number>(256).fill(0);
  const settle = (key: number, field: 'acked' | 'applied'): void => {
    const w = waiting.get(key);
    if (w === undefined) return;
    w[field] = true;
    if (w.acked && w.applied) {
      waiting.delete(key);
      w.then();
    }
  };
  const log = await connectFrames(logPort, (f) => {
    if (f.type === ACK) settle(f.id, 'acked');
    else if (f.type === RECORD) {
      applied[f.partition] = f.id;
      if (f.payload.readUInt8(0) === index) settle(f.payload.readUInt32BE(1), 'applied');
    }
  });
  log.send(HELLO, index, 0, Buffer.alloc(0));
  const append = (partition: number, kind: number, body: Buffer, then: () => void): void => {
    const key = nextKey++ >>> 0;
    const record = Buffer.allocUnsafe(6 + body.length);
    record.writeUInt8(index, 0);
    record.writeUInt32BE(key, 1);
    record.writeUInt8(kind, 5);
    body.copy(record, 6);
    waiting.set(key, { acked: false, applied: false, then });
    log.send(APPEND, key, partition, record);
  };
  const server = net.createServer((socket) => {
    new Conn(socket, (f, c) => {
      if (f.type !== SUBMIT) return;
      const body = Buffer.from(f.payload);
      append(f.partition, 1, body, () =>
        append(f.partition, 2, body, () => c.send(REPLY, f.id, f.partition, body)),
      );
    });
  });
  return listen(server);
}

async function runIngress(partitions: number, processorPorts: number[]): Promise<number> {
  const waiting = new Map<number, (payload: Buffer) => void>();
  const conns = await Promise.all(
    processorPorts.map((port) =>
      connectFrames(port, (f) => {
        const w = waiting.get(f.id);
        if (w === undefined) return;
        waiting.delete(f.id);
        w(f.payload);
      }),
    ),
  );
  let nextId = 1;
  let nextPartition = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = nextId++ >>> 0;
      const partition = nextPartition++ % partitions;
      waiting.set(id, (payload) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(payload);
      });
      conns[partition % conns.length]!.send(SUBMIT, id, partition, Buffer.concat(chunks));
    });
  });
  return listen(server);
}

const [role, ...args] = process.argv.slice(2);
const port =
  role === 'log'
    ? await runLog(args[0]!, Number(args[1]))
    : role === 'processor'
      ? await runProcessor(Number(args[0]), Number(args[1]))
      : role === 'ingress'
        ? await runIngress(Number(args[0]), args.slice(1).map(Number))
        : undefined;
if (port === undefined) {
  process.stderr.write(`usage: pipeline-node.js log|processor|ingress …\n`);
  process.exit(2);
}
process.stdout.write(
  formatReadyLine({
    role: String(role),
    node: String(role),
    pid: process.pid,
    addresses: { tcp: `127.0.0.1:${port}` },
  }) + '\n',
);
exitWithParent();
