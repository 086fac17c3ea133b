// Process faults on services: kill -9 (healed by a restart with the same data), SIGSTOP pause
// (healed by SIGCONT), restart (a one-shot; its heal only makes sure the service runs), forced
// leadership transfer (one-shot; nothing to undo), and clients-before-processors (processors
// down while the workload already runs; healed by starting them).
import { bothDirections, proxiesTouching, type EvidencePlan } from './evidence.js';
import { FaultError, type Fault, type FaultContext, type Injected } from './fault.js';
import { allOf, describeService, leaderWaitMs, selectServices, type ServiceSelector } from './selectors.js';

function serviceFault(
  name: string,
  on: ServiceSelector,
  inject: (ctx: FaultContext, service: string) => Promise<void>,
  heal: (ctx: FaultContext, service: string) => Promise<void>,
  /** Extra details recorded once the fault is in (e.g. how each service's stop went). */
  report?: (ctx: FaultContext, services: string[]) => Record<string, unknown>,
  /** What proves it landed (default: the services held work, by the traffic on their links). */
  evidence: (ctx: FaultContext, services: string[]) => EvidencePlan = heldWork,
): Fault {
  return {
    name,
    describe: describeService(on),
    async inject(ctx): Promise<Injected> {
      const sel = await selectServices(ctx, on);
      for (const s of sel.names) await inject(ctx, s);
      return {
        target: sel.names.join(','),
        affects: sel.names,
        leader: sel.leader,
        details: { services: sel.names, ...report?.(ctx, sel.names) },
        evidence: evidence(ctx, sel.names),
      };
    },
    async heal(ctx, injected) {
      for (const s of (injected.details?.['services'] as string[] | undefined) ?? []) await heal(ctx, s);
    },
  };
}

/**
 * A process fault landed when the process held work: its links (into and out of it, both
 * directions) carried bytes or dials in the second before it or while it lasted — a
 * killed or paused service that nobody was talking to proved nothing.
 */
function heldWork(ctx: FaultContext, services: string[]): EvidencePlan {
  const proxies = [...new Set(services.flatMap((s) => proxiesTouching(ctx.target.links, s)))].sort();
  return { proxies, directions: bothDirections, look: 'around' };
}

function service(ctx: FaultContext, name: string) {
  const s = ctx.target.services.get(name);
  if (s === undefined) throw new FaultError('E_FAULT_TARGET', `no service ${name}`);
  return s;
}

export const kill = (on: ServiceSelector): Fault =>
  serviceFault(
    'kill',
    on,
    (ctx, s) => service(ctx, s).kill(),
    async (ctx, s) => {
      if (!service(ctx, s).isRunning()) await service(ctx, s).restart();
    },
  );

export const pause = (on: ServiceSelector): Fault =>
  serviceFault(
    'pause',
    on,
    (ctx, s) => service(ctx, s).pause(),
    (ctx, s) => service(ctx, s).resume(),
  );

export const restart = (on: ServiceSelector): Fault =>
  serviceFault(
    'restart',
    on,
    (ctx, s) => service(ctx, s).restart(),
    async (ctx, s) => {
      if (!service(ctx, s).isRunning()) await service(ctx, s).restart();
    },
    // Whether each stop was graceful (exited on SIGTERM in time), where the runtime can tell:
    // the gracefulStops check reads it.
    (ctx, names) => {
      const stops = names.flatMap((s) => {
        const outcome = service(ctx, s).lastStop?.();
        return outcome !== undefined ? [{ service: s, ...outcome }] : [];
      });
      return stops.length > 0 ? { stops } : {};
    },
  );

/** Moves leadership of a partition away from its leader (to `to`, or a random other processor). */
export function transferLeadership(options: { partition: number; to?: string }): Fault {
  return {
    name: 'transfer-leadership',
    describe: `partition ${options.partition}${options.to !== undefined ? ` to ${options.to}` : ''}`,
    async inject(ctx): Promise<Injected> {
      const from = await ctx.target.leaderOf(options.partition);
      const others = [...ctx.target.services.values()]
        .filter((s) => s.role === 'processor' && s.name !== from && s.isRunning())
        .map((s) => s.name)
        .sort();
      const to = options.to ?? (others.length > 0 ? ctx.random.pick(others) : undefined);
      if (to === undefined)
        throw new FaultError('E_FAULT_TARGET', `no processor to move partition ${options.partition} to`);
      await ctx.target.transferLeadership(options.partition, to);
      return {
        target: from ?? `partition-${options.partition}`,
        affects: from !== undefined ? [from, to] : [to],
        leader: true,
        details: { partition: options.partition, from, to },
        evidence: heldWork(ctx, from !== undefined ? [from] : [to]),
      };
    },
    heal: () => Promise.resolve(),
    // The leader's lookup, then the target's own bound on the move (and a little to answer).
    injectBoundMs: (ctx) =>
      ctx.target.transferLeadershipBoundMs === undefined
        ? undefined
        : leaderWaitMs + ctx.target.transferLeadershipBoundMs + TRANSFER_BOUND_SLACK_MS,
  };
}

/** Time for a transfer's inject to return after the target's own bound on the move ran out. */
const TRANSFER_BOUND_SLACK_MS = 2000;

/** The seed's start-up race: the workload runs while no processor is up. */
export function clientsBeforeProcessors(): Fault {
  return serviceFault(
    'clients-before-processors',
    allOf('processor'),
    async (ctx, s) => {
      if (service(ctx, s).isRunning()) await service(ctx, s).kill();
    },
    async (ctx, s) => {
      await ctx.target.startProcessors();
      if (!service(ctx, s).isRunning()) await service(ctx, s).restart();
    },
    undefined,
    // It landed when clients called while no processor was up: bytes on the clients' links.
    (ctx) => ({
      proxies: [
        ...new Set(
          Object.entries(ctx.target.links)
            .filter(([name]) => name.startsWith('client->'))
            .map(([, proxy]) => proxy),
        ),
      ].sort(),
      directions: bothDirections,
    }),
  );
}
