// Selectors name what a fault hits without knowing it up front: a service by name, the leader
// of a partition (asked of the controller at inject time), a random service of a role, or a
// link between two of those, or the link into one of those (whoever dials it: `linkInto`).
// Selection is by role and relation, so one suite runs on every target with those roles; a
// target can tell from a fault's `describe` what it needs (requirementsOf) and skip a suite
// whose service, role, link or leader it does not have.
import type { StartedTarget, TargetRequirement } from '../targets/target.js';
import type { ProxyCounters } from './evidence.js';
import { FaultError, type FaultContext } from './fault.js';

export type ServiceSelector =
  | string
  | { kind: 'leaderOf'; partition: number }
  | { kind: 'randomOf'; role: 'processor' | 'ingress' | 'log' }
  | { kind: 'allOf'; role: 'processor' | 'ingress' | 'log' };

export type LinkSelector =
  | string
  | { kind: 'link'; from: ServiceSelector; to: ServiceSelector }
  /** `linkKind`: only links of that kind (`client`, `peer`, `storage`, or a declared one). */
  | { kind: 'linkInto'; to: ServiceSelector; linkKind?: string }
  /** Any link between the system's services (of `linkKind`), one that carries traffic if any does. */
  | { kind: 'anyLink'; linkKind?: string };

export function leaderOf(options: { partition: number }): ServiceSelector {
  return { kind: 'leaderOf', partition: options.partition };
}

export function randomOf(role: 'processor' | 'ingress' | 'log'): ServiceSelector {
  return { kind: 'randomOf', role };
}

export function allOf(role: 'processor' | 'ingress' | 'log'): ServiceSelector {
  return { kind: 'allOf', role };
}

export function link(from: ServiceSelector, to: ServiceSelector): LinkSelector {
  return { kind: 'link', from, to };
}

/**
 * A link that leads into the selected service, whoever dials it: among several, one that
 * carries traffic now, else one that carried traffic since the warm-up began (a cut on a link
 * nobody uses tests nothing), else any (seeded); `kind` keeps only links of that kind.
 */
export function linkInto(to: ServiceSelector, options: { kind?: string } = {}): LinkSelector {
  return options.kind !== undefined
    ? { kind: 'linkInto', to, linkKind: options.kind }
    : { kind: 'linkInto', to };
}

/**
 * Any link between the system's own services (never the clients' links), chosen when the
 * fault goes in: among those that carry traffic now, else those that carried traffic since the
 * warm-up began, else among all (seeded) — so a drawn schedule meets traffic on any target, whichever way its
 * nodes happen to be connected. `kind` keeps only links of that kind.
 */
export function anyLink(options: { kind?: string } = {}): LinkSelector {
  return options.kind !== undefined ? { kind: 'anyLink', linkKind: options.kind } : { kind: 'anyLink' };
}

/**
 * A link's kind: what the target declared (`client`, `peer`, `storage`, …), else `client` for
 * the workload's links and `peer` for the rest.
 */
export function linkKindOf(target: Pick<StartedTarget, 'linkKinds'>, link: string): string {
  return target.linkKinds?.[link] ?? (link.startsWith('client->') ? 'client' : 'peer');
}

/** One of `links` (sorted), among the busiest tier that holds any of them (busyTiers), else any (seeded). */
function preferBusy(ctx: FaultContext, tiers: readonly Set<string>[], links: readonly string[]): string {
  for (const busy of tiers) {
    const used = links.filter((n) => busy.has(ctx.target.links[n] ?? ''));
    if (used.length > 0) return ctx.random.pick(used);
  }
  return ctx.random.pick(links);
}

/** How far back "busy now" looks: links that carried bytes in the last this long. */
export const RECENT_TRAFFIC_MS = 2000;

/**
 * The proxies that carry traffic, most telling first: those that carried bytes in the last few
 * seconds, then those that did since the traffic baseline (either absent when there is nothing
 * to tell by). A link busy in the warm-up may have gone quiet since — its peer killed by an
 * earlier fault, its clients moved to another node — so a choice looks at the recent first.
 */
export async function busyTiers(ctx: FaultContext): Promise<Set<string>[]> {
  if (ctx.proxyCounters === undefined) return [];
  const recent = ctx.recentTraffic?.at(RECENT_TRAFFIC_MS);
  if (recent === undefined && ctx.trafficBaseline === undefined) return [];
  let now;
  try {
    now = await ctx.proxyCounters();
  } catch {
    return [];
  }
  const movedSince = (then: ProxyCounters): Set<string> => {
    const busy = new Set<string>();
    for (const [proxy, c] of now) {
      const b = then.get(proxy);
      if (c.upstream + c.downstream > (b?.upstream ?? 0) + (b?.downstream ?? 0)) busy.add(proxy);
    }
    return busy;
  };
  return [recent, ctx.trafficBaseline].filter((x) => x !== undefined).map(movedSince);
}

export function describeService(s: ServiceSelector): string {
  if (typeof s === 'string') return s;
  if (s.kind === 'leaderOf') return `leaderOf(${s.partition})`;
  return `${s.kind}(${s.role})`;
}

export function describeLink(l: LinkSelector): string {
  if (typeof l === 'string') return l;
  if (l.kind === 'linkInto')
    return `into(${describeService(l.to)}${l.linkKind !== undefined ? `:${l.linkKind}` : ''})`;
  if (l.kind === 'anyLink') return `any(${l.linkKind ?? ''})`;
  return `${describeService(l.from)}->${describeService(l.to)}`;
}

export type { TargetRequirement as Requirement } from '../targets/target.js';

/**
 * What a fault's `describe` (as describeService / describeLink write it) needs of a target:
 * the parse of exactly those forms, kept beside them. Other describes need nothing known.
 */
export function requirementsOf(describe: string): TargetRequirement[] {
  const one = (d: string): TargetRequirement[] => {
    if (/^leaderOf\(\d+\)$/.test(d)) return [{ kind: 'leader' }];
    const role = /^(?:randomOf|allOf)\((\w+)\)$/.exec(d);
    if (role !== null) return [{ kind: 'role', role: role[1]! }];
    if (/^[A-Za-z0-9_-]+$/.test(d)) return [{ kind: 'service', name: d }];
    return [];
  };
  if (/^any\([A-Za-z0-9_-]*\)$/.test(describe)) return [{ kind: 'linkInto' }];
  const into = /^into\((.+?)(?::[A-Za-z0-9_-]+)?\)$/.exec(describe);
  if (into !== null) return [{ kind: 'linkInto' }, ...one(into[1]!)];
  const arrow = describe.indexOf('->');
  if (arrow < 0) return one(describe);
  const from = describe.slice(0, arrow);
  const to = describe.slice(arrow + 2);
  const plain = (e: string): boolean => /^[A-Za-z0-9_*-]+$/.test(e);
  if (plain(from) && plain(to)) return [{ kind: 'link', name: describe }];
  // A relation: its selected ends must exist, and a named dialer must dial something of its
  // own (`ingress->leaderOf(0)` needs links from ingress); the link itself is checked at inject.
  const dialer: TargetRequirement[] = plain(from) && from !== '*' ? [{ kind: 'linkFrom', from }] : [];
  return [...(plain(from) ? dialer : one(from)), ...(plain(to) ? [] : one(to))];
}

/** What a schedule's faults need of a target (for Target.unsupported, before anything starts). */
export function scheduleRequirements(
  faults: readonly { name: string; describe: string; needs?: readonly TargetRequirement[] }[],
): TargetRequirement[] {
  return faults.flatMap((f) => [
    ...(f.needs ?? []),
    ...(f.name === 'transfer-leadership'
      ? [{ kind: 'transferLeadership' as const }]
      : f.needs !== undefined
        ? []
        : requirementsOf(f.describe)),
  ]);
}

/** How long a leaderOf selection waits for a partition that has no leader at the moment. */
export const leaderWaitMs = 3000;

export interface SelectedServices {
  names: string[];
  leader: boolean;
}

export async function selectServices(ctx: FaultContext, s: ServiceSelector): Promise<SelectedServices> {
  const all = [...ctx.target.services.keys()];
  if (typeof s === 'string') {
    if (!ctx.target.services.has(s))
      throw new FaultError('E_FAULT_TARGET', `no service ${s} (have ${all.join(', ')})`);
    return { names: [s], leader: false };
  }
  if (s.kind === 'leaderOf') {
    // A partition between leaders (an election under way) has one again within moments: the
    // fault waits for it, bounded, rather than being skipped.
    let node = await ctx.target.leaderOf(s.partition);
    for (let waited = 0; node === undefined && waited < leaderWaitMs; waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
      node = await ctx.target.leaderOf(s.partition);
    }
    if (node === undefined || !ctx.target.services.has(node)) {
      const why =
        node !== undefined
          ? `the target named ${node}, which is no service of it`
          : await ctx.target.explainNoLeader?.(s.partition).catch((err: unknown) => String(err));
      throw new FaultError(
        'E_FAULT_TARGET',
        `partition ${s.partition} has no known leader${why !== undefined ? ` (${why})` : ''}`,
      );
    }
    return { names: [node], leader: true };
  }
  const ofRole = all.filter((n) => ctx.target.services.get(n)?.role === s.role).sort();
  if (ofRole.length === 0) throw new FaultError('E_FAULT_TARGET', `no ${s.role} service`);
  return s.kind === 'allOf'
    ? { names: ofRole, leader: false }
    : { names: [ctx.random.pick(ofRole)], leader: false };
}

export async function selectLink(
  ctx: FaultContext,
  l: LinkSelector,
): Promise<{ link: string; proxy: string; leader: boolean; reversed?: boolean }> {
  let name: string;
  let leader = false;
  let reversed = false;
  if (typeof l === 'string') name = l;
  else if (l.kind === 'linkInto') {
    const to = await selectServices(ctx, l.to);
    const ofKind = (n: string): boolean =>
      !n.startsWith('client->') && (l.linkKind === undefined || linkKindOf(ctx.target, n) === l.linkKind);
    const links = Object.keys(ctx.target.links).filter(ofKind).sort();
    const into = links.filter((n) => n.endsWith(`->${to.names[0]}`));
    const outOf = links.filter((n) => n.startsWith(`${to.names[0]}->`));
    if (into.length === 0 && outOf.length === 0)
      throw new FaultError(
        'E_FAULT_TARGET',
        `no ${l.linkKind !== undefined ? `${l.linkKind} ` : ''}link into ${to.names[0]} (have ${Object.keys(ctx.target.links).join(', ')})`,
      );
    // A system that keeps one connection per pair of peers dials it from either side: when no
    // link into the service carried traffic, a busy link it dialled itself carries its inbound
    // bytes the other way (the fault's stream is turned round to keep hurting bytes into it).
    // Tier by tier (busy now, then since the warm-up): a busy link into it, else a busy one it
    // dialled; with none busy in any tier, a link into it, else one it dialled.
    const tiers = await busyTiers(ctx);
    const tier = tiers.find((busy) => [...into, ...outOf].some((n) => busy.has(ctx.target.links[n] ?? '')));
    const isBusy = (n: string): boolean => tier?.has(ctx.target.links[n] ?? '') === true;
    const busyOut = outOf.filter(isBusy);
    if (into.length > 0 && (into.some(isBusy) || busyOut.length === 0))
      name = preferBusy(ctx, tier !== undefined ? [tier] : [], into);
    else {
      name = ctx.random.pick(busyOut.length > 0 ? busyOut : outOf);
      reversed = true;
    }
    leader = to.leader;
  } else if (l.kind === 'anyLink') {
    const internal = Object.keys(ctx.target.links)
      .filter((n) => !n.startsWith('client->'))
      .filter((n) => l.linkKind === undefined || linkKindOf(ctx.target, n) === l.linkKind)
      .sort();
    if (internal.length === 0)
      throw new FaultError(
        'E_FAULT_TARGET',
        `no ${l.linkKind !== undefined ? `${l.linkKind} ` : ''}link between services (have ${Object.keys(ctx.target.links).join(', ')})`,
      );
    name = preferBusy(ctx, await busyTiers(ctx), internal);
  } else {
    // A plain name is a link endpoint as written (`client`, `ingress`, `log`), not looked up.
    const end = (e: ServiceSelector): Promise<SelectedServices> =>
      typeof e === 'string' ? Promise.resolve({ names: [e], leader: false }) : selectServices(ctx, e);
    const from = await end(l.from);
    const to = await end(l.to);
    name = `${from.names[0]}->${to.names[0]}`;
    leader = from.leader || to.leader;
  }
  // With one ingress its links are named by role (`ingress->log`), not by node (`ingress-1->log`).
  // A link every dialer shares (`*->node-2`) stands for each dialer's link to that service.
  const shared = `*->${name.slice(name.indexOf('->') + 2)}`;
  const proxy =
    ctx.target.links[name] ??
    (ctx.target.links[shared] !== undefined ? ctx.target.links[(name = shared)] : undefined) ??
    ctx.target.links[
      (name = name.replace(/^ingress-\d+->/, 'ingress->').replace(/->ingress-\d+$/, '->ingress'))
    ];
  if (proxy === undefined)
    throw new FaultError(
      'E_FAULT_TARGET',
      `no link ${name} (have ${Object.keys(ctx.target.links).join(', ')})`,
    );
  return { link: name, proxy, leader, ...(reversed ? { reversed } : {}) };
}
