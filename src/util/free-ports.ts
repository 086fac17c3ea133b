// For servers that take fixed ports (Restate's config, Prometheus and the containers' flags:
// none can report a port 0 back), we reserve free ports on 127.0.0.1 up front: listen on port 0 for all of them at once (no duplicates
// within one call), read the ports, then close. Another process may still take one before
// the server binds it; the server then exits and its start fails with its log tail.
import { createServer, type Server } from 'node:net';

export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, host, () => resolve());
      });
    }
    return servers.map((s) => {
      const address = s.address();
      if (address === null || typeof address === 'string') throw new Error('no TCP address');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/** One free port (see freePorts: ask for several at once when they must differ). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return (await freePorts(1, host))[0]!;
}
