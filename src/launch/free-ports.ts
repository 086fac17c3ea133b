// For servers that take fixed ports (Restate's config, etcd's flags, Prometheus and the
// containers' flags: none can report a port 0 back), we reserve free ports on 127.0.0.1 up
// front: bind each, read the ports, then close. Another process may still take one before
// the server binds it; the server then exits and its start fails with its log tail.
//
// The ports come from below the kernel's ephemeral range (ip_local_port_range), not from
// port 0: a port 0 listen returns an ephemeral port, which any outgoing connection on a busy
// machine may take as its local port between our close and the server's bind — seen as
// Restate's "Address in use" in CI. Outgoing connections never use the range below.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

const FIRST_FIXED_PORT = 10_000;
const MAX_TRIES_PER_PORT = 50;

/** The ports outgoing connections do not use: [10000, start of the ephemeral range), when known. */
function fixedPortRange(): [number, number] | undefined {
  try {
    const [lo] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (lo !== undefined && Number.isInteger(lo) && lo > FIRST_FIXED_PORT + 1000)
      return [FIRST_FIXED_PORT, lo];
  } catch {
    // not Linux, or no /proc: port 0 it is
  }
  return undefined;
}

function listen(server: Server, port: number, host: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES') resolve(false);
      else reject(err);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(true);
    });
  });
}

export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: Server[] = [];
  const range = fixedPortRange();
  try {
    for (let i = 0; i < count; i++) {
      let bound = false;
      for (let t = 0; range !== undefined && !bound && t < MAX_TRIES_PER_PORT; t++) {
        const server = createServer();
        const port = range[0] + Math.floor(Math.random() * (range[1] - range[0]));
        if (await listen(server, port, host)) {
          servers.push(server);
          bound = true;
        }
      }
      if (!bound) {
        const server = createServer();
        servers.push(server);
        await listen(server, 0, host);
      }
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
