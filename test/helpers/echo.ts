// A TCP echo server on a free port of 127.0.0.1, as a proxied link's upstream in fault tests.
import net from 'node:net';

export interface Echo {
  /** host:port */
  address: string;
  stop(): Promise<void>;
}

export async function startEcho(): Promise<Echo> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.pipe(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    stop: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
