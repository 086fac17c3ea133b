// Control-plane churn against the embedded proxy, shared by the churn test and the `injector`
// bench: does the injector ever wedge?
//
//   echo upstream (child process, killed and restarted) ◀── proxies ◀── N clients (ping/echo)
//                                                            ▲
//              churn loops (toxiproxy-node-client): add/update/remove toxics,
//              disable/enable, delete/recreate; readers: GET /proxies, GET …/toxics
//
// Every API call is bounded by a timeout: one that times out is "unanswered". After each
// toxic removal every connection open on that proxy must move bytes again (an echo arrives)
// or be closed within a bound (30 s: on a loaded machine the event loop can lag by seconds, and a wedge is forever); after a disable, a delete or an upstream kill every connection
// open on it must be closed within the bound. One that does neither is "stuck". Beside them,
// each proxy may carry a stalled reader: a client that sends megabytes and never reads, so
// the proxy holds bytes it cannot flush when the proxy is disabled or deleted (a call that
// waited for that flush would hold the server's lock, and every call behind it). At the end
// every client is closed and every proxy deleted, and the server must hold no connection
// (opened = closed on its counters) and no extra file descriptor.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { Toxiproxy, type Proxy } from 'toxiproxy-node-client';
import { startToxiproxyServer, type StartedToxiproxyServer } from '../../src/proxy/server.js';
import { toxiproxyMetricNames } from '../../src/protocol/names.js';
import { createRandom, type Random } from '../../src/util/random.js';

export interface ChurnOptions {
  /** Client connections kept open (each reconnects when closed). */
  connections: number;
  proxies: number;
  /** How long the churn runs. */
  durationMs: number;
  seed: number;
  /** Kill the upstream (SIGKILL) and restart it on the same port, over and over. */
  killUpstream: boolean;
  /** An API call still unanswered after this is counted unanswered. Default 5000. */
  callTimeoutMs?: number;
  /** A connection must move bytes or be closed this long after a removal. Default 30,000. */
  stuckBoundMs?: number;
  /** Pause between a client's echo and its next ping, drawn in [0, max]. Default 500. */
  thinkMsMax?: number;
  /** How long a toxic, a disable or a delete holds before it is undone, drawn up to this. Default 400. */
  holdMsMax?: number;
  /**
   * Per proxy, a client that writes this many bytes and never reads (0: none), opened again
   * each time the proxy is created or enabled. Default 0.
   */
  stalledReaderBytes?: number;
  /** The toxic types drawn; default all of toxicTypes. */
  toxicTypes?: readonly ToxicType[];
  /** Called as each stuck connection is found, while it is still open (for diagnosis). */
  onStuck?: (stuck: StuckConnection) => void;
  /** The server to churn; default: a fresh embedded one, stopped at the end. */
  server?: StartedToxiproxyServer;
}

export interface ApiCall {
  op: string;
  ms: number;
  /**
   * 'ok'; 'gone': a read answered 404 because a churn loop deleted the proxy meanwhile;
   * 'error': any other answer that is not a success; 'unanswered': no answer in time.
   */
  outcome: 'ok' | 'gone' | 'error' | 'unanswered';
  detail?: string;
}

export interface StuckConnection {
  proxy: string;
  after: string;
  port: number;
  ageMs: number;
  /** Echo bytes the client still waited for, and how long since it last received any. */
  waitingBytes: number;
  sinceRxMs: number;
  /** The client's own port (the proxy's events name it). */
  clientPort: number;
}

export interface ChurnResult {
  calls: ApiCall[];
  /** Checks made after removals, disables, deletes and kills, and the connections they covered. */
  checks: number;
  checkedConnections: number;
  stuck: StuckConnection[];
  /** Connections clients opened through the proxies, and echoes they received. */
  connectionsOpened: number;
  echoes: number;
  /** Most client connections open at once. */
  peakOpen: number;
  upstreamKills: number;
  /** After everything was closed and deleted: opened − closed on the server's counters. */
  serverOpenAfter: number;
  /** The server stopped within 10 s (always true for a server passed in). */
  serverStopped: boolean;
  fdsBefore: number;
  fdsAfter: number;
}

const toxicTypes = [
  'latency',
  'bandwidth',
  'slicer',
  'timeout',
  'reset_peer',
  'limit_data',
  'slow_close',
] as const;

export type ToxicType = (typeof toxicTypes)[number];

function toxicAttributes(type: ToxicType, r: Random): Record<string, number> {
  switch (type) {
    case 'latency':
      return { latency: r.between(1, 300), jitter: r.between(0, 50) };
    case 'bandwidth':
      return { rate: r.between(1, 100) };
    case 'slicer':
      return { average_size: r.between(1, 16), size_variation: r.between(0, 4), delay: r.between(0, 2000) };
    case 'timeout':
      return { timeout: r.pick([0, 0, r.between(50, 2000)]) };
    case 'reset_peer':
      return { timeout: r.between(0, 200) };
    case 'limit_data':
      return { bytes: r.between(0, 4096) };
    case 'slow_close':
      return { delay: r.between(0, 300) };
  }
}

const echoScript = `
const net = require('node:net');
const server = net.createServer((s) => { s.on('error', () => {}); s.pipe(s); });
server.listen({ port: Number(process.argv[1]), host: '127.0.0.1', backlog: 4096 }, () => console.log(server.address().port));
`;

/** The echo upstream as a child process; restart() starts it again on the same port. */
class EchoUpstream {
  port = 0;
  private child: ChildProcess | undefined;

  async start(): Promise<void> {
    const child = spawn(process.execPath, ['-e', echoScript, String(this.port)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.child = child;
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('echo upstream did not start within 10 s')), 10_000);
      createInterface({ input: child.stdout }).once('line', (l) => {
        clearTimeout(timer);
        resolve(l);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`echo upstream exited ${code} before listening`));
      });
    });
    this.port = Number(line);
  }

  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }
}

/** One client connection slot: connects, pings, reconnects when closed. */
class Client {
  socket: net.Socket | undefined;
  /** The proxy port the open socket is connected to. */
  port = 0;
  connected = false;
  lastRxMs = 0;
  openedAtMs = 0;
  expected = 0;
  received = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly proxy: string,
    private readonly harness: Harness,
    private readonly r: Random,
  ) {}

  connect(): void {
    if (this.harness.stopping) return;
    const port = this.harness.ports.get(this.proxy);
    if (port === undefined) return this.later(50 + this.r.int(100));
    const s = net.connect({ host: '127.0.0.1', port });
    this.socket = s;
    this.port = port;
    this.expected = 0;
    this.received = 0;
    s.setNoDelay(true);
    s.on('error', () => {});
    s.once('connect', () => {
      this.connected = true;
      this.openedAtMs = performance.now();
      this.harness.onOpened();
      this.ping();
    });
    s.on('data', (d: Buffer) => {
      this.lastRxMs = performance.now();
      this.received += d.length;
      if (this.received >= this.expected) {
        this.harness.echoes++;
        this.later(this.r.int(this.harness.thinkMsMax + 1), () => this.ping());
      }
    });
    s.once('close', () => {
      if (this.connected) this.harness.onClosed();
      this.connected = false;
      this.socket = undefined;
      if (this.timer) clearTimeout(this.timer);
      this.later(20 + this.r.int(100));
    });
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.socket?.destroy();
  }

  private ping(): void {
    const s = this.socket;
    if (!s || s.destroyed || this.harness.stopping) return;
    const payload = Buffer.alloc(64, 0x61);
    this.expected += payload.length;
    s.write(payload);
  }

  private later(ms: number, then: () => void = () => this.connect()): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      then();
    }, ms);
  }
}

class Harness {
  stopping = false;
  readonly ports = new Map<string, number>();
  readonly clients: Client[] = [];
  /** The stalled reader of each proxy (they are not checked: they choose to wait). */
  readonly stalled = new Map<string, net.Socket>();
  readonly calls: ApiCall[] = [];
  readonly stuck: StuckConnection[] = [];
  echoes = 0;
  checks = 0;
  checkedConnections = 0;
  connectionsOpened = 0;
  open = 0;
  peakOpen = 0;
  constructor(
    readonly thinkMsMax: number,
    private readonly callTimeoutMs: number,
    private readonly stuckBoundMs: number,
    private readonly onStuck: ((stuck: StuckConnection) => void) | undefined,
  ) {}

  onOpened(): void {
    this.connectionsOpened++;
    this.open++;
    this.peakOpen = Math.max(this.peakOpen, this.open);
  }
  onClosed(): void {
    this.open--;
  }

  /** Opens `proxy`'s stalled reader (closing the one before): it writes `bytes`, reads none. */
  stall(proxy: string, bytes: number): void {
    this.stalled.get(proxy)?.destroy();
    this.stalled.delete(proxy);
    const port = this.ports.get(proxy);
    if (bytes <= 0 || port === undefined || this.stopping) return;
    const s = net.connect({ host: '127.0.0.1', port });
    s.on('error', () => {});
    s.pause();
    s.once('connect', () => s.write(Buffer.alloc(bytes, 0x62)));
    this.stalled.set(proxy, s);
  }

  /** Runs one API call bounded by the call timeout and records how it ended. */
  async call<T>(op: string, fn: () => Promise<T>, mayBeGone = false): Promise<T | undefined> {
    const start = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.callTimeoutMs);
    });
    try {
      const result = await Promise.race([fn(), timedOut]);
      const ms = performance.now() - start;
      if (result === 'timeout') {
        this.calls.push({ op, ms, outcome: 'unanswered' });
        return undefined;
      }
      this.calls.push({ op, ms, outcome: 'ok' });
      return result;
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      const gone = mayBeGone && detail.endsWith('status code 404');
      this.calls.push({ op, ms: performance.now() - start, outcome: gone ? 'gone' : 'error', detail });
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Waits (bounded) until every client connected to `proxy` (on `port`) at this moment has
   * received bytes since, or closed (`mustClose`: closed only).
   */
  async check(
    proxy: string | undefined,
    port: number | undefined,
    after: string,
    mustClose: boolean,
  ): Promise<void> {
    const since = performance.now();
    const watched = this.clients.filter(
      (c) => c.connected && (proxy === undefined || (c.proxy === proxy && c.port === port)),
    );
    const sockets = new Map(watched.map((c) => [c, c.socket]));
    this.checks++;
    this.checkedConnections += watched.length;
    const settled = (c: Client): boolean =>
      c.socket !== sockets.get(c) || !c.connected || (!mustClose && c.lastRxMs > since);
    const deadline = since + this.stuckBoundMs;
    let left = watched;
    while (left.length > 0 && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      left = left.filter((c) => !settled(c));
    }
    const now = performance.now();
    for (const c of left) {
      const stuck: StuckConnection = {
        proxy: c.proxy,
        after,
        port: c.port,
        ageMs: Math.round(now - c.openedAtMs),
        waitingBytes: c.expected - c.received,
        sinceRxMs: c.lastRxMs === 0 ? -1 : Math.round(now - c.lastRxMs),
        clientPort: c.socket?.localPort ?? 0,
      };
      this.stuck.push(stuck);
      this.onStuck?.(stuck);
    }
  }
}

function countFds(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return -1;
  }
}

async function openOnServer(server: StartedToxiproxyServer): Promise<number> {
  const metric = server.registry.getSingleMetric(toxiproxyMetricNames.connectionsTotal);
  if (!metric) return 0;
  const values = (await metric.get()).values;
  let open = 0;
  for (const v of values) {
    if (v.labels.event === 'opened') open += v.value;
    if (v.labels.event === 'closed') open -= v.value;
  }
  return open;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runChurn(options: ChurnOptions): Promise<ChurnResult> {
  const callTimeoutMs = options.callTimeoutMs ?? 5000;
  const holdMsMax = options.holdMsMax ?? 400;
  const stalledReaderBytes = options.stalledReaderBytes ?? 0;
  const random = createRandom(options.seed);
  const h = new Harness(
    options.thinkMsMax ?? 500,
    callTimeoutMs,
    options.stuckBoundMs ?? 30_000,
    options.onStuck,
  );
  const fdsBefore = countFds();
  const ownServer = options.server === undefined;
  const server = options.server ?? (await startToxiproxyServer({ port: 0, seed: options.seed }));
  const client = new Toxiproxy(server.url);
  const upstream = new EchoUpstream();
  await upstream.start();
  let upstreamKills = 0;
  const names = Array.from({ length: options.proxies }, (_, i) => `churn${i}`);
  const proxies = new Map<string, Proxy>();
  const create = async (name: string): Promise<void> => {
    const p = await h.call('create', () =>
      client.createProxy({ name, listen: '127.0.0.1:0', upstream: `127.0.0.1:${upstream.port}` }),
    );
    if (!p) return;
    proxies.set(name, p);
    h.ports.set(name, Number(p.listen.slice(p.listen.lastIndexOf(':') + 1)));
    h.stall(name, stalledReaderBytes);
  };
  try {
    for (const name of names) await create(name);
    for (let i = 0; i < options.connections; i++) {
      const c = new Client(names[i % names.length] as string, h, random.fork(`client${i}`));
      h.clients.push(c);
      c.connect();
    }
    // Let the clients connect before the churn starts (bounded).
    const openBy = performance.now() + 20_000;
    while (h.open < options.connections && performance.now() < openBy) await sleep(50);
    const endAt = performance.now() + options.durationMs;
    const running = (): boolean => performance.now() < endAt;

    const churnOne = async (name: string, r: Random): Promise<void> => {
      let n = 0;
      while (running()) {
        const proxy = proxies.get(name);
        const port = h.ports.get(name);
        if (!proxy) {
          await create(name);
          await sleep(50);
          continue;
        }
        const hold = (): Promise<void> => sleep(r.int(holdMsMax + 1));
        const action = r.weighted({ toxic: 6, disable: 1, remove: 1 });
        if (action === 'toxic') {
          const type = r.pick(options.toxicTypes ?? toxicTypes);
          const toxicName = `t${n++}`;
          const toxic = await h.call(`add ${type}`, () =>
            proxy.addToxic({
              name: toxicName,
              type,
              stream: r.pick(['upstream', 'downstream'] as const),
              toxicity: r.pick([1, 1, 0.5]),
              attributes: toxicAttributes(type, r) as never,
            }),
          );
          if (!toxic) continue;
          await hold();
          if (r.next() < 0.3) {
            await h.call(`update ${type}`, () =>
              toxic.update({ ...toxic.toJson(), attributes: toxicAttributes(type, r) as never }),
            );
            await hold();
          }
          await h.call(`remove ${type}`, () => toxic.remove());
          await h.check(name, port, `remove ${type}`, false);
        } else if (action === 'disable') {
          h.ports.delete(name);
          const updated = await h.call('disable', () =>
            proxy.update({ enabled: false, listen: proxy.listen, upstream: proxy.upstream }),
          );
          await h.check(name, port, 'disable', true);
          await hold();
          const enabled = await h.call('enable', () =>
            (updated ?? proxy).update({ enabled: true, listen: proxy.listen, upstream: proxy.upstream }),
          );
          if (enabled && port !== undefined) {
            h.ports.set(name, port);
            h.stall(name, stalledReaderBytes);
          }
        } else {
          h.ports.delete(name);
          proxies.delete(name);
          await h.call('delete', () => proxy.remove());
          await h.check(name, port, 'delete', true);
          await hold();
          await create(name);
        }
      }
    };
    const reader = async (r: Random): Promise<void> => {
      while (running()) {
        const name = r.pick(names);
        if (r.next() < 0.5) await h.call('list', () => client.getAll());
        else await h.call('get', () => client.get(name), true);
        await sleep(r.int(50));
      }
    };
    const killer = async (r: Random): Promise<void> => {
      while (running()) {
        await sleep(300 + r.int(700));
        if (!running()) break;
        await upstream.kill();
        upstreamKills++;
        await h.check(undefined, undefined, 'upstream kill', true);
        await sleep(r.int(300));
        await upstream.start();
      }
    };
    await Promise.all([
      ...names.map((name) => churnOne(name, random.fork(`churn-${name}`))),
      reader(random.fork('reader1')),
      reader(random.fork('reader2')),
      ...(options.killUpstream ? [killer(random.fork('killer'))] : []),
    ]);
  } finally {
    h.stopping = true;
    for (const c of h.clients) c.stop();
    for (const s of h.stalled.values()) s.destroy();
    for (const p of proxies.values()) await h.call('delete', () => p.remove());
    proxies.clear();
    await upstream.kill();
  }
  // Closed sockets and deleted listeners let go of their descriptors within a bound.
  let serverOpenAfter = await openOnServer(server);
  let fdsAfter = countFds();
  const settleBy = performance.now() + 10_000;
  while (
    (serverOpenAfter !== 0 || h.open !== 0 || fdsAfter > fdsBefore + 40) &&
    performance.now() < settleBy
  ) {
    await sleep(100);
    serverOpenAfter = await openOnServer(server);
    fdsAfter = countFds();
  }
  // A wedged server may never finish stopping: bounded, and reported.
  const serverStopped =
    !ownServer || (await Promise.race([server.stop().then(() => true), sleep(10_000).then(() => false)]));
  return {
    calls: h.calls,
    checks: h.checks,
    checkedConnections: h.checkedConnections,
    stuck: h.stuck,
    connectionsOpened: h.connectionsOpened,
    echoes: h.echoes,
    peakOpen: h.peakOpen,
    upstreamKills,
    serverOpenAfter,
    serverStopped,
    fdsBefore,
    fdsAfter,
  };
}

export function percentileMs(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}
