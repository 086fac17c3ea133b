// Where a run's Toxiproxy comes from: a URL given (option or LIMBO_TOXIPROXY_URL) — a real
// toxiproxy-server — or else the embedded compatible server (src/proxy/server.ts,
// `startToxiproxyServer({host, port, random}) → {url, stop()}`), loaded lazily so the testbed
// builds and runs against a real server before the embedded one exists.
import { Toxiproxy } from 'toxiproxy-node-client';
import { LimboError } from '../util/errors.js';

export interface ToxiproxyHandle {
  url: string;
  client: Toxiproxy;
  /** Stops the embedded server (a given external server is left running). */
  stop(): Promise<void>;
  /** What serves it, for messages (e.g. "embedded", "limbo proxy container …"). */
  description?: string;
}

export class ToxiproxyUnavailableError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_TOXIPROXY_UNAVAILABLE', message, options);
  }
}

export async function openToxiproxy(
  url: string | undefined,
  options: { env?: NodeJS.ProcessEnv; random?: () => number; seed?: number } = {},
): Promise<ToxiproxyHandle> {
  const given = url ?? options.env?.['LIMBO_TOXIPROXY_URL'];
  if (given !== undefined && given !== '') {
    const client = new Toxiproxy(given.replace(/\/$/, ''));
    try {
      await client.getVersion();
    } catch (err) {
      throw new ToxiproxyUnavailableError(`no Toxiproxy answers at ${given}`, { cause: err });
    }
    return { url: given, client, stop: () => Promise.resolve(), description: `Toxiproxy at ${given}` };
  }
  // Loaded only when no URL is given.
  const { startToxiproxyServer } = await import('../proxy/server.js');
  const server = await startToxiproxyServer({
    host: '127.0.0.1',
    port: 0,
    ...(options.random !== undefined ? { random: options.random } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
  });
  return {
    url: server.url,
    client: new Toxiproxy(server.url),
    stop: () => server.stop(),
    description: 'embedded server',
  };
}
