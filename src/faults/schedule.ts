// A schedule is data: (at, for, fault). The scheduler injects each fault at its time after the
// chaos phase starts, heals it `for` later, and records a fault window for each. `finalHeal`
// ends the chaos phase: timers not yet fired are cancelled (skipped) and every fault still
// injected is healed, each heal retried a bounded number of times within a bounded wait.
//
//   at ─▶ inject ─▶ window{injectedAtMs} ─(for)─▶ heal ─▶ window{healedAtMs}
//                                   finalHeal ─▶ heal all still injected
import type { Clock } from '../util/clock.js';
import { parseDurationMs, type Duration } from '../util/duration.js';
import type { FaultWindow } from '../run-data/run-data.js';
import type { Fault, FaultContext, Injected } from './fault.js';
import { bounded } from '../util/bounded.js';
import { evidenceOf, type ProxyCounters } from './evidence.js';

export interface ScheduleEntry {
  atMs: number;
  /** Undefined: healed by the final heal at the end of chaos. */
  forMs?: number;
  fault: Fault;
}

export function at(when: Duration, fault: Fault, options: { for?: Duration } = {}): ScheduleEntry {
  const entry: ScheduleEntry = { atMs: parseDurationMs(when), fault };
  if (options.for !== undefined) entry.forMs = parseDurationMs(options.for);
  return entry;
}

/** When the last scheduled heal happens (the natural length of the chaos phase). */
export function scheduleEndMs(entries: readonly ScheduleEntry[]): number {
  return entries.reduce((end, e) => Math.max(end, e.atMs + (e.forMs ?? 0)), 0);
}

export interface ActiveFault {
  fault: string;
  target: string;
}

export interface SchedulerHooks {
  /** Called whenever the set of active faults changes (for limbo_fault_active). */
  onChange?: (active: readonly ActiveFault[], changed: ActiveFault, active_: boolean) => void;
  onError?: (message: string) => void;
}

export interface RunningSchedule {
  readonly windows: readonly FaultWindow[];
  readonly skipped: readonly { fault: string; describe: string; atMs: number }[];
  active(): ActiveFault[];
  /** Heals everything still injected; resolves when done (or when the bounds ran out). */
  finalHeal(): Promise<void>;
}

export interface ScheduleOptions {
  healAttempts?: number;
  healTimeoutMs?: number;
  injectTimeoutMs?: number;
}

interface Slot {
  entry: ScheduleEntry;
  timer?: NodeJS.Timeout;
  injecting?: Promise<void>;
  injected?: Injected;
  window?: FaultWindow;
  /** The proxies' counters just before and just after the inject (for the fault's evidence). */
  countersBefore?: ProxyCounters;
  countersIn?: ProxyCounters;
  healed: boolean;
  /** The heal in progress (or done): the final heal waits for it rather than skipping it. */
  healing?: Promise<void>;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : JSON.stringify(err);
}

export function startSchedule(
  entries: readonly ScheduleEntry[],
  ctx: FaultContext,
  clock: Clock,
  hooks: SchedulerHooks = {},
  options: ScheduleOptions = {},
): RunningSchedule {
  const healAttempts = options.healAttempts ?? 3;
  const healTimeoutMs = options.healTimeoutMs ?? 15_000;
  const injectTimeoutMs = options.injectTimeoutMs ?? 15_000;
  const windows: FaultWindow[] = [];
  const readTimeoutMs = Math.min(2000, injectTimeoutMs);
  let readError: string | undefined;
  /** The proxies' counters now, or undefined (no reader, or it failed: the evidence says why). */
  const readCounters = async (): Promise<ProxyCounters | undefined> => {
    if (ctx.proxyCounters === undefined) return undefined;
    try {
      return await bounded(ctx.proxyCounters(), readTimeoutMs, 'reading the proxies’ counters');
    } catch (err) {
      readError = errorText(err);
      return undefined;
    }
  };
  const skipped: { fault: string; describe: string; atMs: number }[] = [];
  const slots: Slot[] = entries.map((entry) => ({ entry, healed: false }));
  let ending = false;

  const activeList = (): ActiveFault[] =>
    slots
      .filter((s) => s.window !== undefined && !s.healed)
      .map((s) => ({ fault: s.window!.fault, target: s.window!.target }));

  // A heal may take a while (restarting a container); the final heal awaits one in progress.
  const heal = (slot: Slot): Promise<void> => (slot.healing ??= healOnce(slot));
  const healOnce = async (slot: Slot): Promise<void> => {
    if (slot.injected === undefined || slot.healed) return;
    slot.healed = true; // claimed: a scheduled heal and the final heal never both run
    const plan = slot.injected.evidence;
    if (plan !== undefined && ctx.proxyCounters !== undefined) {
      const out = await readCounters();
      slot.window!.evidence = evidenceOf(
        plan,
        slot.countersBefore,
        slot.countersIn,
        out,
        readError ?? 'the proxies’ counters could not be read',
      );
    }
    if (plan?.hits !== undefined) {
      // A fault inside a service also counts what its hook acted on (0: it met nothing).
      const e = (slot.window!.evidence ??= {
        proxies: [...plan.proxies],
        directions: [...plan.directions],
        bytes: 0,
        unavailable: 'the proxies’ counters were not read',
      });
      e.hook = plan.hits.hook;
      try {
        e.hookHits = await bounded(plan.hits.read(), readTimeoutMs, `reading hook ${plan.hits.hook}`);
      } catch (err) {
        e.hookHitsUnavailable = errorText(err);
      }
    }
    let lastError: unknown;
    for (let attempt = 1; attempt <= healAttempts; attempt++) {
      try {
        await bounded(
          slot.entry.fault.heal(ctx, slot.injected),
          healTimeoutMs,
          `heal of ${slot.entry.fault.name}`,
        );
        lastError = undefined;
        break;
      } catch (err) {
        lastError = err;
      }
    }
    const w = slot.window!;
    w.healedAtMs = clock.nowMs();
    if (lastError !== undefined) {
      w.details = { ...w.details, healError: errorText(lastError) };
      hooks.onError?.(`heal of ${w.fault}@${w.target} failed: ${errorText(lastError)}`);
    }
    hooks.onChange?.(activeList(), { fault: w.fault, target: w.target }, false);
  };

  const inject = async (slot: Slot): Promise<void> => {
    const { fault } = slot.entry;
    const startedMs = clock.nowMs();
    try {
      slot.countersBefore = await readCounters();
      const injected = await bounded(
        fault.inject(ctx),
        Math.max(injectTimeoutMs, fault.injectBoundMs?.(ctx) ?? 0),
        `inject of ${fault.name}`,
      );
      if (injected.evidence !== undefined) slot.countersIn = await readCounters();
      slot.injected = injected;
      const w: FaultWindow = {
        fault: fault.name,
        target: injected.target,
        affects: injected.affects,
        injectedAtMs: startedMs,
      };
      if (injected.leader === true) w.leader = true;
      if (injected.details !== undefined) w.details = injected.details;
      slot.window = w;
      windows.push(w);
      hooks.onChange?.(activeList(), { fault: w.fault, target: w.target }, true);
      if (slot.entry.forMs !== undefined && !ending) {
        slot.timer = setTimeout(() => void heal(slot), slot.entry.forMs);
      }
    } catch (err) {
      skipped.push({ fault: fault.name, describe: fault.describe, atMs: slot.entry.atMs });
      hooks.onError?.(`inject of ${fault.name} on ${fault.describe} failed: ${errorText(err)}`);
    }
  };

  for (const slot of slots) {
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      if (!ending) slot.injecting = inject(slot);
    }, slot.entry.atMs);
  }

  return {
    windows,
    skipped,
    active: activeList,
    async finalHeal() {
      ending = true;
      for (const slot of slots) {
        if (slot.timer !== undefined) clearTimeout(slot.timer);
        if (slot.injecting === undefined && slot.injected === undefined) {
          skipped.push({
            fault: slot.entry.fault.name,
            describe: slot.entry.fault.describe,
            atMs: slot.entry.atMs,
          });
        }
      }
      await Promise.allSettled(slots.map((s) => s.injecting ?? Promise.resolve()));
      // Heal in reverse order of injection: later faults may depend on earlier ones.
      for (const slot of [...slots].reverse()) await heal(slot);
    },
  };
}
