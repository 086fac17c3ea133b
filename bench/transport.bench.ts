// What one message costs on the cluster's hot streams, against what it costs on raw frames:
// a closed loop of 1 or 16 messages in flight on one long-lived stream to an echo in another
// process, over grpc-js (limbo's channel options, no protobuf) and over length-prefixed frames
// on TCP (what the cluster bench's no-work floor uses), side by side in one run. A cluster call
// is twelve messages on such streams (six round trips' worth), so the difference per round trip
// times six is about what moving the hot streams off grpc-js could take off a call's CPU.
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { clientChannelOptions } from '../src/transport/grpc.js';
import { startProcess } from '../src/runtime/process.js';
import { Conn } from './frames.js';
import { childEnv } from './parent-watch.js';
import { cpuMsOf, fmt, ownCpuMs } from './load.js';
import { echoService } from './echo-service.js';

const DURATION_MS = Number(process.env.LIMBO_BENCH_DURATION_MS ?? 4000);
/** Messages in flight: one (each message its own wake-up and write, as on a lightly loaded stream) and 16. */
const IN_FLIGHT = [1, 16];
const PAYLOAD = Buffer.alloc(60, 7);
const server = fileURLToPath(new URL('./transport-echo.js', import.meta.url));

interface Side {
  /** Sends one message; `onEcho` is called with its id when it comes back. */
  send(id: number): void;
  close(): void;
}

function grpcSide(address: string, onEcho: (id: number) => void): Side {
  const Client = grpc.makeGenericClientConstructor(echoService, 'Echo');
  const client = new Client(address, grpc.credentials.createInsecure(), clientChannelOptions);
  const stream = client.makeBidiStreamRequest(
    echoService.stream!.path,
    (b: Buffer) => b,
    (b: Buffer) => b,
  );
  stream.on('data', (m: Buffer) => onEcho(m.readUInt32BE(0)));
  stream.on('error', () => undefined);
  return {
    send: (id) => {
      const m = Buffer.allocUnsafe(4 + PAYLOAD.length);
      m.writeUInt32BE(id, 0);
      PAYLOAD.copy(m, 4);
      stream.write(m);
    },
    close: () => {
      stream.cancel();
      client.close();
    },
  };
}

async function tcpSide(address: string, onEcho: (id: number) => void): Promise<Side> {
  const [host, port] = address.split(':');
  const socket = await new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect(Number(port), host, () => resolve(s));
    s.once('error', reject);
  });
  const conn = new Conn(socket, (f) => onEcho(f.id));
  return { send: (id) => conn.send(1, id, 0, PAYLOAD), close: () => socket.destroy() };
}

async function measure(
  mode: 'grpc' | 'tcp',
  inFlight: number,
): Promise<{ perSecond: number; cpuUs: number }> {
  await using echo = await startProcess({
    name: `echo-${mode}`,
    command: process.execPath,
    args: [server, mode],
    env: childEnv(),
  });
  const address = echo.ready.addresses.tcp!;
  let done = 0;
  let nextId = 1;
  let stopAt = Infinity;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((r) => (finish = r));
  let open = 0;
  const onEcho = (): void => {
    done++;
    if (performance.now() < stopAt) side.send(nextId++);
    else if (--open === 0) finish();
  };
  const side = mode === 'grpc' ? grpcSide(address, onEcho) : await tcpSide(address, onEcho);
  // Warm up, then count.
  for (let i = 0; i < inFlight; i++) side.send(nextId++);
  open = inFlight;
  await new Promise((r) => setTimeout(r, 500));
  const start = performance.now();
  const before = done;
  const cpuBefore = ownCpuMs() + cpuMsOf(echo.pid);
  stopAt = start + DURATION_MS;
  await finished;
  const elapsed = performance.now() - start;
  const trips = done - before;
  const cpu = ownCpuMs() + cpuMsOf(echo.pid) - cpuBefore;
  side.close();
  return { perSecond: (trips * 1000) / elapsed, cpuUs: (cpu * 1000) / trips };
}

export async function run(): Promise<void> {
  console.log(`round trips on one long-lived stream to an echo in another process, ${DURATION_MS} ms each`);
  for (const inFlight of IN_FLIGHT) {
    const g = await measure('grpc', inFlight);
    const t = await measure('tcp', inFlight);
    console.log(
      `${String(inFlight).padStart(2)} in flight: grpc-js ${fmt(g.perSecond, 0)}/s ${fmt(g.cpuUs, 1)} µs CPU a round trip; raw frames ${fmt(t.perSecond, 0)}/s ${fmt(t.cpuUs, 1)} µs; grpc-js ÷ raw ${fmt(g.cpuUs / t.cpuUs, 2)}; a cluster call's six round trips: ${fmt((6 * (g.cpuUs - t.cpuUs)) / 1000, 3)} ms more on grpc-js`,
    );
  }
}
