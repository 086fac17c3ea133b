// Faults inside a service: what no proxy and no signal can make. Each switches one of the
// service's fault hooks on through its own metrics server (POST /limbo/faults, see
// src/services/fault-hooks.ts) and off again at the heal; its evidence is the hook's own count
// of the work it acted on, beside the traffic on the service's links. Plus a restart that
// loses the service's data dir, where the target says the service survives that.
//
//   inject: select services ─▶ POST {hook, params} to each ─▶ (a trigger: move leadership)
//   heal:   POST {hook, off: true} to each (a service restarted since has the hook off anyway)
//
// Only targets whose services run limbo's hooks can take these: a declared target or Restate
// skips a suite that uses one, with the reason, before anything starts.
import type { ServiceHandle, TargetRequirement } from '../targets/target.js';
import { bothDirections, proxiesTouching, type EvidencePlan } from './evidence.js';
import { FaultError, type Fault, type FaultContext, type Injected } from './fault.js';
import { allOf, describeService, requirementsOf, selectServices, type ServiceSelector } from './selectors.js';

const hooksPath = '/limbo/faults';
const hookCallMs = 5000;

/** The service's fault-hook URL: beside its /metrics. */
function hooksUrl(handle: ServiceHandle): string {
  const metrics = handle.metricsUrl();
  if (metrics === undefined)
    throw new FaultError(
      'E_FAULT_TARGET',
      `${handle.name} is not running (no metrics server to reach its fault hooks)`,
    );
  const u = new URL(metrics);
  u.pathname = hooksPath;
  u.search = '';
  return u.toString();
}

async function callHook(url: string, body: unknown): Promise<{ hits: number }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(hookCallMs),
  });
  const text = await res.text();
  if (!res.ok) throw new FaultError('E_FAULT_TARGET', `${url}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  const parsed = JSON.parse(text) as { hits?: unknown };
  return { hits: typeof parsed.hits === 'number' ? parsed.hits : 0 };
}

/** A hook's hits since it was switched on (GET /limbo/faults). */
async function readHits(url: string, hook: string): Promise<number> {
  const res = await fetch(url, { signal: AbortSignal.timeout(hookCallMs) });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  const body = (await res.json()) as { hooks?: { hook: string; hits: number }[] };
  const h = body.hooks?.find((x) => x.hook === hook);
  if (h === undefined) throw new Error(`${url} has no hook ${hook}`);
  return h.hits;
}

function handleOf(ctx: FaultContext, name: string): ServiceHandle {
  const s = ctx.target.services.get(name);
  if (s === undefined) throw new FaultError('E_FAULT_TARGET', `no service ${name}`);
  return s;
}

interface HookFaultSpec {
  name: string;
  hook: string;
  on: ServiceSelector;
  params: Record<string, unknown>;
  /** How it reads in a schedule (default: its selector). */
  describe?: string;
  /** Extra requirements (e.g. moving leadership). */
  needs?: TargetRequirement[];
  /** Roles the hook lives in: a selected service of another role is refused, naming them. */
  roles: readonly string[];
  /** After the hooks are on: what makes the faulted path run (e.g. a leadership change). */
  trigger?: (ctx: FaultContext, services: string[]) => Promise<Record<string, unknown>>;
  /** The services to hook, from the selected ones (default: those). */
  pick?: (ctx: FaultContext, selected: string[]) => Promise<string[]>;
}

/**
 * A fault that switches a hook on in the selected services and off at the heal. Its evidence:
 * the links into and out of those services (did they hold work?) and the hook's own count of
 * what it acted on, summed over them.
 */
export function hookFault(spec: HookFaultSpec): Fault {
  const describe = spec.describe ?? describeService(spec.on);
  return {
    name: spec.name,
    describe,
    needs: [
      { kind: 'faultHook', hook: spec.hook },
      ...requirementsOf(describeService(spec.on)),
      ...(spec.needs ?? []),
    ],
    async inject(ctx): Promise<Injected> {
      const sel = await selectServices(ctx, spec.on);
      const names = spec.pick !== undefined ? await spec.pick(ctx, sel.names) : sel.names;
      for (const n of names) {
        const role = handleOf(ctx, n).role;
        if (!spec.roles.includes(role))
          throw new FaultError(
            'E_FAULT_TARGET',
            `${spec.name}: ${n} is a ${role}; hook ${spec.hook} lives in ${spec.roles.join(', ')} services`,
          );
      }
      const urls = names.map((n) => hooksUrl(handleOf(ctx, n)));
      const switched: string[] = [];
      try {
        for (const [i, url] of urls.entries()) {
          await callHook(url, { hook: spec.hook, params: spec.params });
          switched.push(names[i]!);
        }
      } catch (err) {
        for (const n of switched) await switchOff(ctx, n, spec.hook).catch(() => undefined);
        throw err;
      }
      const triggered = spec.trigger !== undefined ? await spec.trigger(ctx, names) : {};
      const proxies = [...new Set(names.flatMap((n) => proxiesTouching(ctx.target.links, n)))].sort();
      const evidence: EvidencePlan = {
        proxies,
        directions: bothDirections,
        hits: {
          hook: spec.hook,
          read: async () => {
            let sum = 0;
            for (const n of names) {
              const h = handleOf(ctx, n);
              if (!h.isRunning()) continue;
              sum += await readHits(hooksUrl(h), spec.hook);
            }
            return sum;
          },
        },
      };
      return {
        target: names.join(','),
        affects: names,
        leader: sel.leader,
        details: { services: names, hook: spec.hook, params: spec.params, ...triggered },
        evidence,
      };
    },
    async heal(ctx, injected) {
      const names = (injected.details?.['services'] as string[] | undefined) ?? [];
      const hits: Record<string, number> = {};
      for (const n of names) hits[n] = await switchOff(ctx, n, spec.hook);
      if (injected.details !== undefined) injected.details['hitsAtHeal'] = hits;
    },
  };
}

/** Switches the hook off; a service not running has it off already (a restart starts clean). */
async function switchOff(ctx: FaultContext, name: string, hook: string): Promise<number> {
  const h = handleOf(ctx, name);
  if (!h.isRunning()) return 0;
  return (await callHook(hooksUrl(h), { hook, off: true })).hits;
}

const onLog: ServiceSelector = allOf('log');

/**
 * The log refuses appends (UNAVAILABLE, nothing written) while every leader stays up: errors,
 * not latency. `partitions`: only those (default all).
 */
export function logAppendErrors(options: { partitions?: number[] } = {}): Fault {
  return hookFault({
    name: 'log-append-errors',
    hook: 'log.append-error',
    on: onLog,
    roles: ['log'],
    params: options.partitions !== undefined ? { partitions: options.partitions } : {},
  });
}

/** Each durable write of the log completes `delayMs` late (a slow disk). */
export function slowFsync(options: { delayMs: number; partitions?: number[] }): Fault {
  return hookFault({
    name: 'slow-fsync',
    hook: 'log.slow-fsync',
    on: onLog,
    roles: ['log'],
    params: {
      delayMs: options.delayMs,
      ...(options.partitions !== undefined ? { partitions: options.partitions } : {}),
    },
  });
}

/**
 * The log's disk fails its writes (EIO) while every leader stays up; `written` says how much of
 * each failed write reached the disk first: none, all but a torn last frame, or all of it (the
 * error came after the data: an append answered failed whose records are in the log). Each
 * failure fails the partition's appends in flight; the partition recovers from its file a
 * moment later and takes appends again, until the next write fails. `partitions`: only those.
 */
export function logWriteErrors(
  options: { written?: 'none' | 'torn' | 'all'; partitions?: number[] } = {},
): Fault {
  const written = options.written ?? 'none';
  return hookFault({
    name: 'log-write-errors',
    hook: 'log.write-error',
    on: onLog,
    roles: ['log'],
    describe: `${describeService(onLog)} ${written} written`,
    params: {
      written,
      ...(options.partitions !== undefined ? { partitions: options.partitions } : {}),
    },
  });
}

/**
 * The controller's partition-table updates to the ingresses (WatchPartitionTable) delayed by
 * `delayMs`, dropped, or reordered (an update held until a newer one has gone, then sent after
 * it, or after `delayMs`). `watcher`: only ingresses whose name starts with it.
 */
export function tableUpdates(options: {
  how: 'delay' | 'drop' | 'reorder';
  delayMs?: number;
  watcher?: string;
}): Fault {
  return hookFault({
    name: 'table-updates',
    hook: 'controller.table-updates',
    on: onLog,
    roles: ['log'],
    describe: `${describeService(onLog)} ${options.how}`,
    params: {
      how: options.how,
      ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {}),
      ...(options.watcher !== undefined ? { watcher: options.watcher } : {}),
    },
  });
}

export type LeadershipStep = 'claim' | 'announce' | 'catch-up' | 'resume';

/**
 * A leadership change of `partition` whose chosen steps fail in the processor that takes it
 * up: the hook goes on in that processor (`to`, else a seeded pick among those that do not lead
 * it), then the controller moves the partition there. `claim` fails the answer to a fresh-epoch
 * claim (its compare-and-swap went through), `announce` the append of its AnnounceLeader,
 * `catch-up` its log read before it has applied the announce, `resume` taking up the
 * invocations a previous leader left. Each fails as a real error would; the processor retries
 * or steps down and claims a fresh epoch, and leads once the fault is healed.
 */
export function leadershipStepFailure(options: {
  partition: number;
  steps: readonly LeadershipStep[];
  to?: string;
}): Fault {
  const on: ServiceSelector = options.to ?? { kind: 'randomOf', role: 'processor' };
  return hookFault({
    name: 'leadership-step-failure',
    hook: 'processor.leadership-step',
    on,
    roles: ['processor'],
    describe: `partition ${options.partition} ${options.steps.join('+')}${options.to !== undefined ? ` on ${options.to}` : ''}`,
    needs: [{ kind: 'role', role: 'processor' }, { kind: 'transferLeadership' }],
    params: { steps: [...options.steps], partitions: [options.partition] },
    async pick(ctx, selected) {
      if (options.to !== undefined) return selected;
      const leader = await ctx.target.leaderOf(options.partition);
      const others = [...ctx.target.services.values()]
        .filter((s) => s.role === 'processor' && s.name !== leader && s.isRunning())
        .map((s) => s.name)
        .sort();
      if (others.length === 0)
        throw new FaultError('E_FAULT_TARGET', `no processor to move partition ${options.partition} to`);
      return [ctx.random.pick(others)];
    },
    async trigger(ctx, [to]) {
      const from = await ctx.target.leaderOf(options.partition);
      if (from !== to) await ctx.target.transferLeadership(options.partition, to!);
      return { partition: options.partition, from, to, steps: [...options.steps] };
    },
  });
}

/**
 * The wall clock of the selected services stepped by `offsetMs` (Date.now and `new Date()`;
 * performance.now does not move), as an NTP step would; healed by taking the offset away.
 */
export function clockStep(on: ServiceSelector, options: { offsetMs: number }): Fault {
  return hookFault({
    name: 'clock-step',
    hook: 'clock.step',
    on,
    roles: ['log', 'processor', 'ingress'],
    describe: `${describeService(on)} ${options.offsetMs >= 0 ? '+' : ''}${options.offsetMs}ms`,
    params: { offsetMs: options.offsetMs },
  });
}

/**
 * A restart that loses the service's data dir: stopped, its data gone, started again. Only on
 * services whose target says they survive it (a reference processor rebuilds from the log and
 * keeps no data dir at all; a declared service with `dataLoss: 'survives'`); the reference
 * log holds the log's only copy, so it is never offered. Its evidence: the service held work.
 */
export function restartWithDataLoss(on: ServiceSelector): Fault {
  return {
    name: 'data-loss-restart',
    describe: describeService(on),
    needs: [
      { kind: 'dataLoss', ...(typeof on === 'string' ? { service: on } : {}) },
      ...requirementsOf(describeService(on)),
    ],
    async inject(ctx): Promise<Injected> {
      const sel = await selectServices(ctx, on);
      for (const n of sel.names)
        if (handleOf(ctx, n).restartWithoutData === undefined)
          throw new FaultError(
            'E_FAULT_TARGET',
            `${n} cannot lose its data and stay correct (its target does not say it survives data loss)`,
          );
      for (const n of sel.names) await handleOf(ctx, n).restartWithoutData!();
      const proxies = [...new Set(sel.names.flatMap((n) => proxiesTouching(ctx.target.links, n)))].sort();
      return {
        target: sel.names.join(','),
        affects: sel.names,
        leader: sel.leader,
        details: { services: sel.names },
        evidence: { proxies, directions: bothDirections, look: 'around' },
      };
    },
    async heal(ctx, injected) {
      for (const n of (injected.details?.['services'] as string[] | undefined) ?? []) {
        const h = handleOf(ctx, n);
        if (!h.isRunning()) await h.restart();
      }
    },
  };
}
