// A plain TCP proxy for tests that need to freeze one link without Toxiproxy: blackhole()
// stops forwarding on every open connection (bytes are swallowed, sockets stay open), the
// way a dead NAT entry or a silently dropped route looks; new connections still pass.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export class TcpProxy implements AsyncDisposable {
  private upstream: { host: string; port: number } | undefined;
  private readonly frozen = new WeakSet<net.Socket>();
  private readonly sockets = new Set<net.Socket>();

  private constructor(private readonly server: net.Server) {}

  static async start(): Promise<TcpProxy> {
    const server = net.createServer();
    const proxy = new TcpProxy(server);
    server.on('connection', (client) => proxy.accept(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get address(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  setUpstream(address: string): void {
    const [host, port] = address.split(':');
    this.upstream = { host: host as string, port: Number(port) };
  }

  /** Freezes every connection open now; later connections are forwarded as usual. */
  blackhole(): void {
    for (const s of this.sockets) this.frozen.add(s);
  }

  private accept(client: net.Socket): void {
    if (!this.upstream) {
      client.destroy();
      return;
    }
    const server = net.connect(this.upstream.port, this.upstream.host);
    this.sockets.add(client);
    this.sockets.add(server);
    const pipe = (from: net.Socket, to: net.Socket): void => {
      from.on('data', (chunk) => {
        if (!this.frozen.has(from)) to.write(chunk);
      });
      from.on('close', () => {
        this.sockets.delete(from);
        if (!this.frozen.has(from)) to.destroy();
      });
      from.on('error', () => from.destroy());
    };
    pipe(client, server);
    pipe(server, client);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}
