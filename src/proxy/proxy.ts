// A proxy: one TCP listener, its live connections, and its toxics (per direction, in
// creation order). Each accepted client gets its upstream dialled only then; if that
// fails the client is closed at once. Toxic changes are applied to every live connection.
import net from 'node:net';
import { Connection } from './connection.js';
import { defaultQueueLimits, type QueueLimits } from './chunk-queue.js';
import type { Direction, ToxicConfig } from './toxic.js';
import type { Logger } from '../telemetry/logger.js';
import { ApiError } from './api-error.js';
import { joinHostPort } from './resolve-address.js';
import type { ProxyEventInput } from './proxy-events.js';

export interface ProxyHooks {
  random: () => number;
  logger: Logger;
  queueLimits?: QueueLimits;
  onReceived(proxy: Proxy, direction: Direction, bytes: number): void;
  onSent(proxy: Proxy, direction: Direction, bytes: number): void;
  /** Connections opened and closed, toxics applied (GET /events, the connection counters). */
  onEvent(proxy: Proxy, event: ProxyEventInput): void;
  /** How long a toxic change may take on one connection before it is reset instead. */
  rewireBoundMs?: number;
}

/** Rewiring takes a few microtasks per connection; two seconds means it never will finish. */
const defaultRewireBoundMs = 2000;

export interface ProxyJson {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
}

/** "host:port" → parts; a "localhost" host means 127.0.0.1, an empty one stays empty. */
function splitHostPort(address: string): { host: string; port: number } {
  if (address.trim() === '') return { host: '', port: 0 };
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d{1,5})$/.exec(address.trim());
  if (!m) throw new ApiError(500, `listen tcp ${address}: address ${address}: missing port in address`);
  const raw = m[1] ?? m[2] ?? '';
  const host = raw === 'localhost' ? '127.0.0.1' : raw;
  const port = Number(m[3]);
  if (port > 65535) throw new ApiError(500, `listen tcp ${address}: address ${address}: invalid port`);
  return { host, port };
}

/**
 * What a proxy's listener binds, as Go's net.Listen("tcp", listen): an empty host (or an
 * empty `listen`) is every interface (no host: Node takes `::`, dual-stack), `localhost`
 * is 127.0.0.1. Throws ApiError(500) on a malformed address.
 */
export function listenOptions(listen: string): { host?: string; port: number } {
  const { host, port } = splitHostPort(listen);
  return host === '' ? { port } : { host, port };
}

export class Proxy {
  listen: string;
  upstream: string;
  enabled = false;
  /** Creation order, both streams. */
  readonly toxics: ToxicConfig[] = [];
  private server: net.Server | undefined;
  private readonly connections = new Set<Connection>();
  /** Sockets accepted and still dialling upstream. */
  private readonly pending = new Set<net.Socket>();
  /** Listeners stopped whose connections are still closing. */
  private readonly draining = new Set<Promise<void>>();
  private connectionIds = 0;

  constructor(
    readonly name: string,
    listen: string,
    upstream: string,
    private readonly hooks: ProxyHooks,
  ) {
    this.listen = listen;
    this.upstream = upstream;
  }

  toJson(): ProxyJson {
    return { name: this.name, listen: this.listen, upstream: this.upstream, enabled: this.enabled };
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /**
   * Listens; `listen` is rewritten to the bound address. An empty host (or no `listen` at
   * all) binds every interface, as Go's net.Listen does (`[::]:PORT`). Throws ApiError(500)
   * on listen errors.
   */
  async start(): Promise<void> {
    if (this.enabled) return;
    const bind = listenOptions(this.listen);
    const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client) =>
      this.accept(client),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new ApiError(500, `listen tcp ${this.listen}: ${err.message}`)));
      server.listen({ ...bind, backlog: 4096 }, () => resolve());
    });
    server.on('error', (err) => this.hooks.logger.warn('listener error', { proxy: this.name, err }));
    const bound = server.address() as net.AddressInfo;
    this.listen = joinHostPort(bound.address, bound.port);
    this.server = server;
    this.enabled = true;
  }

  /**
   * Stops listening and closes every connection. The port is free when this answers, and
   * every connection is closing (its sockets flush for at most 2 s, then are destroyed), as
   * Toxiproxy's Stop closes them without waiting: a disable or delete that waited for each
   * client to take its FIN would hold the server's lock, and so every other call, for as long
   * as the slowest client on a busy event loop. `drained` waits for every socket to be gone
   * too (the server's own stop).
   */
  async stop(options: { drained?: boolean } = {}): Promise<void> {
    this.enabled = false;
    const server = this.server;
    this.server = undefined;
    for (const socket of this.pending) socket.destroy();
    this.pending.clear();
    for (const c of [...this.connections]) c.close('close');
    if (server) {
      // close() closes the listening socket at once; its callback waits for the connections.
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      this.draining.add(drained);
      void drained.then(() => this.draining.delete(drained));
    }
    // An earlier disable's connections may still be flushing, too.
    if (options.drained) await Promise.all([...this.draining]);
  }

  private toxicEvent(type: 'toxic_added' | 'toxic_updated' | 'toxic_removed', t: ToxicConfig): void {
    this.hooks.onEvent(this, { type, proxy: this.name, toxic: t.name, toxicType: t.type, stream: t.stream });
  }

  async addToxic(config: ToxicConfig): Promise<void> {
    this.toxics.push(config);
    this.toxicEvent('toxic_added', config);
    await this.rewireEach('add', (c) => c.link(config.stream).addToxic(config));
  }

  async updateToxic(config: ToxicConfig): Promise<void> {
    this.toxicEvent('toxic_updated', config);
    await this.rewireEach('update', (c) => c.link(config.stream).updateToxic(config));
  }

  async removeToxic(config: ToxicConfig): Promise<void> {
    const i = this.toxics.indexOf(config);
    if (i >= 0) this.toxics.splice(i, 1);
    this.toxicEvent('toxic_removed', config);
    await this.rewireEach('remove', (c) => c.link(config.stream).removeToxic(config));
  }

  /**
   * Applies a toxic change to every live connection. Every API mutation holds the server's
   * lock while it runs, so one connection whose rewiring never finished would wedge the whole
   * control plane (Toxiproxy's API hanging while a toxic is removed under load). A connection
   * not rewired within the bound is reset instead, and the call answers.
   */
  private async rewireEach(what: string, op: (c: Connection) => Promise<void>): Promise<void> {
    const boundMs = this.hooks.rewireBoundMs ?? defaultRewireBoundMs;
    await Promise.all(
      [...this.connections].map(async (c) => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), boundMs);
        });
        try {
          if ((await Promise.race([op(c), late])) === 'late') {
            this.hooks.logger.warn('toxic change not applied in time: connection reset', {
              proxy: this.name,
              what,
              boundMs,
            });
            c.close('reset');
          }
        } finally {
          clearTimeout(timer);
        }
      }),
    );
  }

  async removeAllToxics(): Promise<void> {
    for (const t of [...this.toxics]) await this.removeToxic(t);
  }

  private accept(client: net.Socket): void {
    if (!this.enabled) {
      client.destroy();
      return;
    }
    let target: { host: string; port: number };
    try {
      target = splitHostPort(this.upstream);
      // Go dials ":PORT" on the local system.
      if (target.host === '') target.host = '127.0.0.1';
    } catch {
      client.destroy();
      return;
    }
    this.pending.add(client);
    client.on('error', () => client.destroy());
    const server = net.connect({ host: target.host, port: target.port, allowHalfOpen: true });
    const onDialError = (err: Error): void => {
      this.pending.delete(client);
      this.hooks.logger.debug('upstream unreachable', { proxy: this.name, err });
      // A dial that met a dead upstream still met the proxy: counted, so a fault on a link
      // whose far end is down can show that clients wanted it.
      this.hooks.onEvent(this, { proxy: this.name, type: 'upstream_unreachable' });
      client.destroy();
    };
    server.once('error', onDialError);
    client.once('close', () => {
      if (this.pending.delete(client)) server.destroy();
    });
    server.once('connect', () => {
      server.off('error', onDialError);
      if (!this.pending.delete(client) || client.destroyed) {
        server.destroy();
        return;
      }
      client.removeAllListeners('error');
      client.removeAllListeners('close');
      const id = ++this.connectionIds;
      const event = (e: Omit<ProxyEventInput, 'proxy' | 'connection'>): void =>
        this.hooks.onEvent(this, { proxy: this.name, connection: id, ...e });
      const connection = new Connection(client, server, this.toxics, {
        random: this.hooks.random,
        logger: this.hooks.logger,
        queueLimits: this.hooks.queueLimits ?? defaultQueueLimits,
        onReceived: (direction, bytes) => this.hooks.onReceived(this, direction, bytes),
        onSent: (direction, bytes) => this.hooks.onSent(this, direction, bytes),
        onClosed: (c) => {
          this.connections.delete(c);
          event({ type: 'connection_closed' });
        },
        onToxicApplied: (t, stream) =>
          event({ type: 'toxic_applied', toxic: t.name, toxicType: t.type, stream }),
      });
      this.connections.add(connection);
      event({ type: 'connection_opened', client: `${client.remoteAddress ?? ''}:${client.remotePort ?? 0}` });
      connection.start();
      client.resume();
    });
  }
}
