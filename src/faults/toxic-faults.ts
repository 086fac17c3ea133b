// Every Toxiproxy toxic as a fault on a link, plus link down (the proxy disabled). Inject adds
// a uniquely named toxic to the link's proxy; heal removes that toxic (and re-enables a downed
// proxy), always through toxiproxy-node-client.
import type { ToxicDirection, ToxicType } from 'toxiproxy-node-client';
import { bothDirections, type Direction } from './evidence.js';
import type { Fault, Injected } from './fault.js';
import { describeLink, selectLink, type LinkSelector } from './selectors.js';

export interface ToxicOptions {
  /** upstream = client → server bytes, downstream = server → client (Toxiproxy's default). */
  stream?: ToxicDirection;
  toxicity?: number;
}

let toxicCounter = 0;

/**
 * Toxics that hurt a connection as a whole (hold it, reset it, delay its close) met traffic
 * when bytes moved either way or a connection was dialled; the others only in their stream.
 */
const wholeConnection: ReadonlySet<string> = new Set(['timeout', 'reset_peer', 'slow_close']);
const directionsOf = (type: string, stream: Direction): readonly Direction[] =>
  wholeConnection.has(type) ? bothDirections : [stream];

export function toxicFault<A>(
  type: Exclude<ToxicType, 'down'>,
  on: LinkSelector,
  attributes: A,
  options: ToxicOptions = {},
): Fault {
  return {
    name: type,
    describe: describeLink(on),
    async inject(ctx): Promise<Injected> {
      const sel = await selectLink(ctx, on);
      const proxy = await ctx.toxiproxy.get(sel.proxy);
      const name = `limbo_${type}_${process.pid}_${++toxicCounter}`;
      // A link the service dialled itself, chosen for bytes into it: the other stream.
      const asked = options.stream ?? 'downstream';
      const stream = sel.reversed === true ? (asked === 'downstream' ? 'upstream' : 'downstream') : asked;
      await proxy.addToxic<A>({ name, type, stream, toxicity: options.toxicity ?? 1, attributes });
      return {
        target: sel.link,
        affects: [...new Set([sel.link, sel.proxy])],
        leader: sel.leader,
        details: { proxy: sel.proxy, toxic: name, stream, attributes },
        evidence: { proxies: [sel.proxy], directions: directionsOf(type, stream) },
      };
    },
    async heal(ctx, injected) {
      const proxy = await ctx.toxiproxy.get(String(injected.details?.['proxy']));
      const toxic = await proxy.getToxic(String(injected.details?.['toxic']));
      await toxic.remove();
    },
  };
}

export const latency = (
  on: LinkSelector,
  a: { latencyMs: number; jitterMs?: number },
  o?: ToxicOptions,
): Fault => toxicFault('latency', on, { latency: a.latencyMs, jitter: a.jitterMs ?? 0 }, o);
export const bandwidth = (on: LinkSelector, a: { rateKBps: number }, o?: ToxicOptions): Fault =>
  toxicFault('bandwidth', on, { rate: a.rateKBps }, o);
/** Stops all data; closes the connection after timeoutMs (0 = black hole until healed). */
export const timeout = (
  on: LinkSelector,
  a: { timeoutMs: number } = { timeoutMs: 0 },
  o?: ToxicOptions,
): Fault => toxicFault('timeout', on, { timeout: a.timeoutMs }, o);
export const blackhole = (on: LinkSelector, o?: ToxicOptions): Fault => timeout(on, { timeoutMs: 0 }, o);
export const resetPeer = (
  on: LinkSelector,
  a: { timeoutMs: number } = { timeoutMs: 0 },
  o?: ToxicOptions,
): Fault => toxicFault('reset_peer', on, { timeout: a.timeoutMs }, o);
export const slowClose = (on: LinkSelector, a: { delayMs: number }, o?: ToxicOptions): Fault =>
  toxicFault('slow_close', on, { delay: a.delayMs }, o);
export const slicer = (
  on: LinkSelector,
  a: { averageSize: number; sizeVariation?: number; delayUs?: number },
  o?: ToxicOptions,
): Fault =>
  toxicFault(
    'slicer',
    on,
    { average_size: a.averageSize, size_variation: a.sizeVariation ?? 0, delay: a.delayUs ?? 0 },
    o,
  );
export const limitData = (on: LinkSelector, a: { bytes: number }, o?: ToxicOptions): Fault =>
  toxicFault('limit_data', on, { bytes: a.bytes }, o);

/** The link's proxy disabled: new connections refused, open ones closed. */
export function linkDown(on: LinkSelector): Fault {
  return {
    name: 'link-down',
    describe: describeLink(on),
    async inject(ctx): Promise<Injected> {
      const sel = await selectLink(ctx, on);
      const proxy = await ctx.toxiproxy.get(sel.proxy);
      await proxy.update({ enabled: false, listen: proxy.listen, upstream: proxy.upstream });
      return {
        target: sel.link,
        affects: [...new Set([sel.link, sel.proxy])],
        leader: sel.leader,
        details: { proxy: sel.proxy },
        // Refused dials are not seen by a disabled proxy: the connections it cut, the bytes
        // and dials up to the cut's reading, count.
        evidence: { proxies: [sel.proxy], directions: bothDirections },
      };
    },
    async heal(ctx, injected) {
      const proxy = await ctx.toxiproxy.get(String(injected.details?.['proxy']));
      await proxy.update({ enabled: true, listen: proxy.listen, upstream: proxy.upstream });
    },
  };
}
