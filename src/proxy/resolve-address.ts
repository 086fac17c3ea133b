// What Go's net.ResolveTCPAddr("tcp", address).String() gives, so a listen address can be
// compared with the one a proxy is bound to the way Toxiproxy 2.12 compares them (Toxiproxy #631):
// `localhost:8080` and `127.0.0.1:8080` are the same listener, so populate and update
// leave the proxy, its toxics and its connections alone.
//
//   "localhost:80" ─▶ lookup (IPv4 first, like Go for "tcp") ─▶ "127.0.0.1:80"
//   ":80" ─▶ ":80"      "[::1]:80" ─▶ "[::1]:80"      "nohost.invalid:80" ─▶ ApiError 500
import dns from 'node:dns/promises';
import net from 'node:net';
import { ApiError } from './api-error.js';

/** getaddrinfo can wait for a slow resolver; a listen address never waits longer. */
const lookupTimeoutMs = 5000;

export async function resolveTcpAddress(address: string): Promise<string> {
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):([^:]*)$/.exec(address);
  if (address !== '' && !m) throw new ApiError(500, `address ${address}: missing port in address`);
  const host = m?.[1] ?? m?.[2] ?? '';
  const portText = m?.[3] ?? '';
  const port = portText === '' ? 0 : Number(portText);
  if (!/^\d*$/.test(portText) || port > 65535) throw new ApiError(500, `address ${address}: invalid port`);
  if (host === '') return `:${port}`;
  return joinHostPort(await lookupHost(host), port);
}

export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

async function lookupHost(host: string): Promise<string> {
  const family = net.isIP(host);
  if (family === 4) return host;
  if (family === 6) return new URL(`http://[${host}]/`).hostname.slice(1, -1);
  let timer: NodeJS.Timeout | undefined;
  try {
    const all = await Promise.race([
      dns.lookup(host, { all: true }),
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('lookup timed out')), lookupTimeoutMs);
      }),
    ]);
    const chosen = all.find((a) => a.family === 4) ?? all[0];
    if (!chosen) throw new Error('no such host');
    return chosen.address;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOTFOUND' ? 'no such host' : err instanceof Error ? err.message : String(err);
    throw new ApiError(500, `lookup ${host}: ${why}`);
  } finally {
    clearTimeout(timer);
  }
}
