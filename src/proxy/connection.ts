// One proxied client connection: the client socket, the upstream socket, and a Link per
// direction.
//
//   client ──▶ Link(upstream) ──▶ upstream server
//   client ◀── Link(downstream) ◀── upstream server
//
// Sockets are half-open capable so that an end read from one side travels through the
// toxics (slow_close, latency) like data; when it reaches the far side the whole
// connection closes (Toxiproxy has no half-close).
import type net from 'node:net';
import { END, Interrupt, type QueueLimits } from './chunk-queue.js';
import { Link } from './link.js';
import type { Direction, ToxicConfig } from './toxic.js';
import type { Logger } from '../telemetry/logger.js';

export interface ConnectionHooks {
  random: () => number;
  logger: Logger;
  queueLimits: QueueLimits;
  onReceived(direction: Direction, bytes: number): void;
  onSent(direction: Direction, bytes: number): void;
  onClosed(connection: Connection): void;
  onToxicApplied(config: ToxicConfig, direction: Direction): void;
}

/** How long a closing socket may take to flush before it is destroyed. */
const closeFlushMs = 2000;

export class Connection {
  readonly upstreamLink: Link;
  readonly downstreamLink: Link;
  private readonly abort = new Interrupt();
  private closed = false;

  constructor(
    private readonly client: net.Socket,
    private readonly server: net.Socket,
    toxics: readonly ToxicConfig[],
    private readonly hooks: ConnectionHooks,
  ) {
    const host = (direction: Direction) => ({
      random: hooks.random,
      logger: hooks.logger,
      queueLimits: hooks.queueLimits,
      reset: () => this.close('reset'),
      onToxicApplied: (config: ToxicConfig) => hooks.onToxicApplied(config, direction),
    });
    this.upstreamLink = new Link(
      'upstream',
      toxics.filter((t) => t.stream === 'upstream'),
      host('upstream'),
    );
    this.downstreamLink = new Link(
      'downstream',
      toxics.filter((t) => t.stream === 'downstream'),
      host('downstream'),
    );
  }

  start(): void {
    for (const socket of [this.client, this.server]) {
      socket.setNoDelay(true);
      socket.on('error', () => this.close('close'));
      socket.on('close', () => this.close('close'));
    }
    this.upstreamLink.start();
    this.downstreamLink.start();
    this.pump(this.client, this.upstreamLink);
    this.pump(this.server, this.downstreamLink);
    void this.drain(this.upstreamLink, this.server);
    void this.drain(this.downstreamLink, this.client);
  }

  link(direction: Direction): Link {
    return direction === 'upstream' ? this.upstreamLink : this.downstreamLink;
  }

  /** Closes both sockets: 'close' flushes and sends FIN, 'reset' sends RST at once. */
  close(mode: 'close' | 'reset'): void {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.upstreamLink.stop();
    this.downstreamLink.stop();
    for (const socket of [this.client, this.server]) {
      if (mode === 'reset') {
        // One timer tick after the last write: if data and the RST reach a Node (libuv)
        // peer in the same poll, it reports a clean end instead of ECONNRESET.
        socket.pause();
        setTimeout(() => {
          if (!socket.destroyed) socket.resetAndDestroy();
        }, 1);
        continue;
      }
      if (socket.destroyed) continue;
      const timer = setTimeout(() => socket.destroy(), closeFlushMs);
      timer.unref();
      socket.end(() => {
        clearTimeout(timer);
        socket.destroy();
      });
    }
    this.hooks.onClosed(this);
  }

  /** Socket → link input, pausing the socket while the link is full. */
  private pump(socket: net.Socket, link: Link): void {
    socket.on('data', (data: Buffer) => {
      if (this.closed) return; // closing: nobody reads the links any more
      this.hooks.onReceived(link.direction, data.length);
      link.input.push({ data, timestampMs: performance.now() });
      if (link.input.isFull && !socket.isPaused()) {
        socket.pause();
        void link.input.waitForSpace(this.abort).then(() => {
          if (!this.closed) socket.resume();
        });
      }
    });
    socket.on('end', () => link.input.push(END));
  }

  /** Link output → socket, respecting the socket's backpressure; an end closes everything. */
  private async drain(link: Link, socket: net.Socket): Promise<void> {
    const signal = this.abort;
    for (;;) {
      const item = await link.output.receive(signal);
      if (item === undefined || item === 'timeout') return;
      if (item === END) return this.close('close');
      if (socket.destroyed) return;
      this.hooks.onSent(link.direction, item.data.length);
      if (!socket.write(item.data)) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            socket.off('drain', done);
            socket.off('close', done);
            signal.off(done);
            resolve();
          };
          socket.on('drain', done);
          socket.on('close', done);
          signal.on(done);
        });
      }
    }
  }
}
