// Shared pieces of the Toxiproxy acceptance suite. The suite drives whatever server
// LIMBO_TOXIPROXY_URL names (a real toxiproxy-server), else an embedded one started here;
// upstreams are real test servers on 127.0.0.1, and every proxy gets a unique name so
// files can share one real server in parallel.
import net from 'node:net';
import { after, before } from 'node:test';
import { randomBytes } from 'node:crypto';
import { Toxiproxy, type Proxy } from 'toxiproxy-node-client';
import { startToxiproxyServer } from '../../src/proxy/server.js';

export interface Target extends AsyncDisposable {
  url: string;
  client: Toxiproxy;
  embedded: boolean;
  stop(): Promise<void>;
}

export async function startTarget(env: NodeJS.ProcessEnv = process.env): Promise<Target> {
  const external = env.LIMBO_TOXIPROXY_URL;
  if (external !== undefined && external !== '') {
    const url = external.replace(/\/$/, '');
    const stop = async (): Promise<void> => {};
    return { url, client: new Toxiproxy(url), embedded: false, stop, [Symbol.asyncDispose]: stop };
  }
  const server = await startToxiproxyServer({ port: 0 });
  return {
    url: server.url,
    client: new Toxiproxy(server.url),
    embedded: true,
    stop: () => server.stop(),
    [Symbol.asyncDispose]: () => server.stop(),
  };
}

let counter = 0;
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}_${process.pid}_${counter}_${randomBytes(3).toString('hex')}`;
}

export interface TestServer extends AsyncDisposable {
  port: number;
  address: string;
  /** Sockets accepted so far (server side). */
  sockets: net.Socket[];
  stop(): Promise<void>;
}

/** A TCP server on 127.0.0.1:0; `onSocket` decides what it does (default: echo). */
export async function startTestServer(
  onSocket: (socket: net.Socket) => void = (s) => s.pipe(s),
): Promise<TestServer> {
  const sockets: net.Socket[] = [];
  const server = net.createServer((s) => {
    sockets.push(s);
    s.on('error', () => {});
    onSocket(s);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return { port, address: `127.0.0.1:${port}`, sockets, stop, [Symbol.asyncDispose]: stop };
}

/** Port of a proxy's `listen` ("127.0.0.1:PORT" or "[::]:PORT"). */
export function portOf(proxy: { listen: string }): number {
  return Number(proxy.listen.slice(proxy.listen.lastIndexOf(':') + 1));
}

export async function createProxy(target: Target, upstream: string, prefix = 'p'): Promise<Proxy> {
  return target.client.createProxy({ name: uniqueName(prefix), listen: '127.0.0.1:0', upstream });
}

export function connect(port: number, timeoutMs = 5000): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`connect to ${port} timed out`));
    }, timeoutMs);
    s.once('connect', () => {
      clearTimeout(timer);
      s.setNoDelay(true);
      resolve(s);
    });
    s.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** Reads until `n` bytes have arrived (or the socket ends / `timeoutMs` passes). */
export function readBytes(
  socket: net.Socket,
  n: number,
  timeoutMs = 10_000,
): Promise<{ data: Buffer; reads: number }> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let reads = 0;
    const finish = (err?: Error): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      if (err) reject(err);
      else resolve({ data: Buffer.concat(parts), reads });
    };
    const onData = (d: Buffer): void => {
      parts.push(d);
      size += d.length;
      reads += 1;
      if (size >= n) finish();
    };
    const onEnd = (): void => finish(size >= n ? undefined : new Error(`ended after ${size} of ${n} bytes`));
    const timer = setTimeout(
      () => finish(new Error(`read timed out after ${size} of ${n} bytes`)),
      timeoutMs,
    );
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
  });
}

export interface Closing {
  /** Bytes received before the close. */
  data: Buffer;
  errorCode: string | undefined;
  ended: boolean;
  afterMs: number;
}

/** Collects everything until the socket closes; rejects after `timeoutMs`. */
export function readUntilClose(socket: net.Socket, timeoutMs = 10_000): Promise<Closing> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let errorCode: string | undefined;
    let ended = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(`socket still open after ${timeoutMs} ms (${Buffer.concat(parts).length} bytes read)`),
      );
    }, timeoutMs);
    socket.on('data', (d: Buffer) => parts.push(d));
    socket.on('end', () => {
      ended = true;
      socket.end();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      errorCode ??= err.code;
    });
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ data: Buffer.concat(parts), errorCode, ended, afterMs: performance.now() - start });
    });
  });
}

export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_r, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Round trip: write `payload`, read back as many bytes (through an echo upstream). */
export async function echoRoundTrip(
  socket: net.Socket,
  payload: Buffer,
  timeoutMs = 10_000,
): Promise<Buffer> {
  const reading = readBytes(socket, payload.length, timeoutMs);
  socket.write(payload);
  return (await reading).data;
}

export function sleepMs(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * The usual fixture of a test file: one Toxiproxy server (the external one or an embedded one)
 * and one echo server, started before the file's tests and stopped after them.
 */
export function useTargetAndEcho(): { readonly target: Target; readonly echo: TestServer } {
  let target: Target | undefined;
  let echo: TestServer | undefined;
  before(async () => {
    target = await startTarget();
    echo = await startTestServer();
  });
  after(async () => {
    await echo?.stop();
    await target?.stop();
  });
  return {
    get target(): Target {
      if (target === undefined) throw new Error('the Toxiproxy fixture is used before it started');
      return target;
    },
    get echo(): TestServer {
      if (echo === undefined) throw new Error('the echo fixture is used before it started');
      return echo;
    },
  };
}

/** A fresh proxy for the body of one test, removed afterwards whatever happens. */
export async function withProxy<T>(
  target: Target,
  upstream: string,
  prefix: string,
  body: (proxy: Proxy) => Promise<T>,
): Promise<T> {
  const proxy = await createProxy(target, upstream, prefix);
  try {
    return await body(proxy);
  } finally {
    await proxy.remove();
  }
}
