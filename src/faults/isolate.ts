// A network partition of one service: every link into it and out of it cut at once, in both
// directions — what a node cut off by a switch or a firewall rule meets, unlike one cut link
// that the system may simply route around. `direction` keeps only the inbound or the outbound
// half (an asymmetric partition); `kinds` only links of those kinds (e.g. `peer`: the node
// still answers its clients but cannot reach its peers); `how` says what the cut does to the
// bytes and connections:
//   hold    (default) every byte held until the heal, then delivered: what a real partition
//           does to an open TCP connection (the peers' retransmissions get through once it
//           heals, nothing is lost); a latency toxic longer than any run, whose removal
//           sends what it holds;
//   drop    every byte thrown away, connections left open (a timeout toxic): a middlebox
//           that eats data — a stream that lost bytes mid-frame is broken after the heal;
//   refuse  the proxies disabled: new connections refused, open ones closed.
//
// A proxy every dialer shares (`*->node-2`) carries other services' traffic to that node as
// well: cutting it for `node-1`'s outbound half would partition more than node-1, so such
// proxies are left alone on the outbound side and named in the fault's details (`notCut`).
// Declare one link per dialer (`node-1->node-2`) to partition such a system exactly.
//
//   inject: links touching the service ─▶ per proxy: a toxic each way | proxy disabled
//   heal:   remove each toxic | enable each proxy
import { bothDirections, endIs, linkEnds } from './evidence.js';
import { FaultError, type Fault, type FaultContext, type Injected } from './fault.js';
import { describeService, linkKindOf, selectServices, type ServiceSelector } from './selectors.js';

export interface IsolateOptions {
  direction?: 'both' | 'inbound' | 'outbound';
  kinds?: readonly string[];
  how?: 'hold' | 'drop' | 'refuse';
}

/** Longer than any run: bytes a `hold` cut takes are held until the heal removes it. */
const HOLD_MS = 3_600_000;

interface Cut {
  link: string;
  proxy: string;
}

let counter = 0;

/** The links into and out of `service` that the partition cuts, and the shared ones it may not. */
export function linksToCut(
  ctx: Pick<FaultContext, 'target'>,
  service: string,
  options: IsolateOptions,
): { cut: Cut[]; notCut: string[] } {
  const direction = options.direction ?? 'both';
  const cut = new Map<string, Cut>();
  const notCut: string[] = [];
  for (const [link, proxy] of Object.entries(ctx.target.links).sort(([a], [b]) => a.localeCompare(b))) {
    const ends = linkEnds(link);
    if (ends === undefined) continue;
    const { from, to } = ends;
    if (options.kinds !== undefined && !options.kinds.includes(linkKindOf(ctx.target, link))) continue;
    const inbound = endIs(to, service);
    const outbound = endIs(from, service);
    if (inbound && direction !== 'outbound') cut.set(proxy, { link, proxy });
    else if (outbound && direction !== 'inbound') cut.set(proxy, { link, proxy });
    else if (from === '*' && direction !== 'inbound' && !inbound) notCut.push(link);
  }
  return { cut: [...cut.values()], notCut };
}

export function isolate(on: ServiceSelector, options: IsolateOptions = {}): Fault {
  const how = options.how ?? 'hold';
  return {
    name: 'isolate',
    describe: describeService(on),
    async inject(ctx): Promise<Injected> {
      const sel = await selectServices(ctx, on);
      const cuts = new Map<string, Cut>();
      const notCut = new Set<string>();
      for (const s of sel.names) {
        const l = linksToCut(ctx, s, options);
        for (const c of l.cut) cuts.set(c.proxy, c);
        for (const n of l.notCut) notCut.add(n);
      }
      if (cuts.size === 0) {
        const which = [
          options.direction !== undefined && options.direction !== 'both' ? options.direction : '',
          options.kinds !== undefined ? options.kinds.join('/') : '',
        ]
          .filter((w) => w !== '')
          .join(' ');
        throw new FaultError(
          'E_FAULT_TARGET',
          `no ${which !== '' ? `${which} ` : ''}link touches ${sel.names.join(', ')} (have ${Object.keys(ctx.target.links).join(', ')})`,
        );
      }
      const toxics: { proxy: string; toxic: string }[] = [];
      const disabled: string[] = [];
      const injected: Injected = {
        target: sel.names.join(','),
        affects: [...sel.names, ...[...cuts.values()].flatMap((c) => [c.link, c.proxy])],
        leader: sel.leader,
        details: {
          services: sel.names,
          how,
          direction: options.direction ?? 'both',
          links: [...cuts.values()].map((c) => c.link),
          toxics,
          disabled,
          ...(notCut.size > 0 ? { notCut: [...notCut] } : {}),
        },
        evidence: { proxies: [...cuts.keys()].sort(), directions: bothDirections },
      };
      try {
        for (const c of cuts.values()) {
          const proxy = await ctx.toxiproxy.get(c.proxy);
          if (how === 'refuse') {
            await proxy.update({ enabled: false, listen: proxy.listen, upstream: proxy.upstream });
            disabled.push(c.proxy);
            continue;
          }
          for (const stream of bothDirections) {
            const toxic = `limbo_isolate_${process.pid}_${++counter}`;
            // hold: a latency longer than any run (its removal sends what it held); drop: a
            // black hole that throws the bytes away.
            if (how === 'hold')
              await proxy.addToxic({
                name: toxic,
                type: 'latency',
                stream,
                toxicity: 1,
                attributes: { latency: HOLD_MS, jitter: 0 },
              });
            else
              await proxy.addToxic({
                name: toxic,
                type: 'timeout',
                stream,
                toxicity: 1,
                attributes: { timeout: 0 },
              });
            toxics.push({ proxy: c.proxy, toxic });
          }
        }
      } catch (err) {
        // Half a partition is not what the schedule asked for: undo what went in, then fail.
        await healCuts(ctx, toxics, disabled).catch(() => undefined);
        throw err;
      }
      return injected;
    },
    async heal(ctx, injected) {
      const d = injected.details ?? {};
      await healCuts(
        ctx,
        (d['toxics'] as { proxy: string; toxic: string }[] | undefined) ?? [],
        (d['disabled'] as string[] | undefined) ?? [],
      );
    },
  };
}

async function healCuts(
  ctx: FaultContext,
  toxics: readonly { proxy: string; toxic: string }[],
  disabled: readonly string[],
): Promise<void> {
  const errors: unknown[] = [];
  for (const t of toxics) {
    try {
      const proxy = await ctx.toxiproxy.get(t.proxy);
      await (await proxy.getToxic(t.toxic)).remove();
    } catch (err) {
      // Gone already (an earlier attempt of this heal removed it): healed.
      if (!/not found|404/i.test(err instanceof Error ? err.message : String(err))) errors.push(err);
    }
  }
  for (const name of disabled) {
    try {
      const proxy = await ctx.toxiproxy.get(name);
      await proxy.update({ enabled: true, listen: proxy.listen, upstream: proxy.upstream });
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw errors[0];
}
