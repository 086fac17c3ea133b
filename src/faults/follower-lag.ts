// Followers lag: every processor except the partition's current leader reads the log late (a
// downstream latency toxic on its `processor-N->log` link), so a replica that becomes leader
// next is behind the acknowledgements the old one gave. The state a stale follower answers
// from (Restate #4513 and #4587) only exists under this fault; a uniform latency on every link
// keeps all replicas at the same pace and never shows it.
//
//   inject: leaderOf(partition) ─▶ other processors ─▶ one latency toxic per `processor-N->log`
//   heal:   remove each toxic
import type { Fault, FaultContext, Injected } from './fault.js';
import { FaultError } from './fault.js';

let counter = 0;

export function followerLag(options: { partition: number; latencyMs: number }): Fault {
  return {
    name: 'follower-lag',
    describe: `followers of partition ${options.partition}`,
    // It slows each follower's own reads of a log service: a target without a service named
    // log (replicas that replicate among themselves) cannot have it, and a suite using it is
    // skipped there with that reason rather than run with the fault failing at each inject.
    needs: [{ kind: 'leader' }, { kind: 'role', role: 'processor' }, { kind: 'service', name: 'log' }],
    async inject(ctx: FaultContext): Promise<Injected> {
      const leader = await ctx.target.leaderOf(options.partition);
      const followers = [...ctx.target.services.values()]
        .filter((s) => s.role === 'processor' && s.name !== leader)
        .map((s) => s.name)
        .sort();
      const links = followers.map((f) => `${f}->log`).filter((l) => ctx.target.links[l] !== undefined);
      if (links.length === 0)
        throw new FaultError(
          'E_FAULT_TARGET',
          `partition ${options.partition} has no follower with a log link`,
        );
      const toxics: { proxy: string; toxic: string }[] = [];
      for (const l of links) {
        const proxyName = ctx.target.links[l] as string;
        const proxy = await ctx.toxiproxy.get(proxyName);
        const toxic = `limbo_follower_lag_${process.pid}_${++counter}`;
        await proxy.addToxic({
          name: toxic,
          type: 'latency',
          stream: 'downstream',
          toxicity: 1,
          attributes: { latency: options.latencyMs, jitter: 0 },
        });
        toxics.push({ proxy: proxyName, toxic });
      }
      return {
        target: followers.join(','),
        affects: [...links, ...toxics.map((t) => t.proxy)],
        details: { toxics, leader, latencyMs: options.latencyMs },
        evidence: { proxies: toxics.map((t) => t.proxy), directions: ['downstream'] },
      };
    },
    async heal(ctx, injected) {
      for (const t of (injected.details?.['toxics'] as { proxy: string; toxic: string }[] | undefined) ??
        []) {
        const proxy = await ctx.toxiproxy.get(t.proxy);
        await (await proxy.getToxic(t.toxic)).remove();
      }
    },
  };
}
