// Selectors name what a fault hits without knowing it up front: a service by name, the leader
// of a partition (asked of the controller at inject time), a random service of a role, or a
// link between two of those.
import { FaultError, type FaultContext } from './fault.js';

export type ServiceSelector =
  | string
  | { kind: 'leaderOf'; partition: number }
  | { kind: 'randomOf'; role: 'processor' | 'ingress' | 'log' }
  | { kind: 'allOf'; role: 'processor' | 'ingress' | 'log' };

export type LinkSelector = string | { kind: 'link'; from: ServiceSelector; to: ServiceSelector };

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

export function describeService(s: ServiceSelector): string {
  if (typeof s === 'string') return s;
  if (s.kind === 'leaderOf') return `leaderOf(${s.partition})`;
  return `${s.kind}(${s.role})`;
}

export function describeLink(l: LinkSelector): string {
  return typeof l === 'string' ? l : `${describeService(l.from)}->${describeService(l.to)}`;
}

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
    const node = await ctx.target.leaderOf(s.partition);
    if (node === undefined || !ctx.target.services.has(node))
      throw new FaultError('E_FAULT_TARGET', `partition ${s.partition} has no known leader`);
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
): Promise<{ link: string; proxy: string; leader: boolean }> {
  let name: string;
  let leader = false;
  if (typeof l === 'string') name = l;
  else {
    // A plain name is a link endpoint as written (`client`, `ingress`, `log`), not looked up.
    const end = (e: ServiceSelector): Promise<SelectedServices> =>
      typeof e === 'string' ? Promise.resolve({ names: [e], leader: false }) : selectServices(ctx, e);
    const from = await end(l.from);
    const to = await end(l.to);
    name = `${from.names[0]}->${to.names[0]}`;
    leader = from.leader || to.leader;
  }
  // With one ingress its links are named by role (`ingress->log`), not by node (`ingress-1->log`).
  const proxy =
    ctx.target.links[name] ??
    ctx.target.links[
      (name = name.replace(/^ingress-\d+->/, 'ingress->').replace(/->ingress-\d+$/, '->ingress'))
    ];
  if (proxy === undefined)
    throw new FaultError(
      'E_FAULT_TARGET',
      `no link ${name} (have ${Object.keys(ctx.target.links).join(', ')})`,
    );
  return { link: name, proxy, leader };
}
