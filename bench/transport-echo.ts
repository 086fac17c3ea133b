// The transport bench's server (transport.bench.ts), in a process of its own: echoes every
// message on one long-lived stream, over grpc-js (a bidi stream with limbo's channel options,
// bytes passed through without protobuf) or over raw length-prefixed frames (frames.ts).
//   node transport-echo.js grpc|tcp      prints the limbo-ready line with its `tcp` address
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { serverOptions } from '../src/transport/grpc.js';
import { formatReadyLine } from '../src/launch/ready.js';
import { echoService } from './echo-service.js';
import { Conn } from './frames.js';
import { exitWithParent } from './parent-watch.js';

async function serveGrpc(): Promise<number> {
  const server = new grpc.Server(serverOptions);
  server.addService(echoService, {
    stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      call.on('data', (m: Buffer) => call.write(m));
      call.on('end', () => call.end());
      call.on('error', () => undefined);
    },
  });
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );
}

function serveTcp(): Promise<number> {
  const server = net.createServer((socket) => {
    new Conn(socket, (f, c) => c.send(f.type, f.id, f.partition, Buffer.from(f.payload)));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
}

const mode = process.argv[2];
if (mode !== 'grpc' && mode !== 'tcp') {
  process.stderr.write('usage: transport-echo.js grpc|tcp\n');
  process.exit(2);
}
const port = mode === 'grpc' ? await serveGrpc() : await serveTcp();
process.stdout.write(
  formatReadyLine({ role: mode, node: mode, pid: process.pid, addresses: { tcp: `127.0.0.1:${port}` } }) +
    '\n',
);
exitWithParent();
