// A fault is an inject with its heal (Jepsen nemesis): inject returns what it did, heal undoes
// exactly that. Faults are stateless specs, so one suite object can run many times; the state
// of one injection travels in `Injected`. Selectors (leaderOf, link) are resolved at inject time.
import type { Toxiproxy } from 'toxiproxy-node-client';
import type { StartedTarget, TargetRequirement } from '../targets/target.js';
import { LimboError } from '../util/errors.js';
import type { Random } from '../util/random.js';
import type { EvidencePlan, ProxyCounterReader, ProxyCounters } from './evidence.js';
import type { RecentTraffic } from './recent-traffic.js';

export interface FaultContext {
  target: StartedTarget;
  toxiproxy: Toxiproxy;
  random: Random;
  /** Reads the proxies' counters: the scheduler's evidence of what each fault met (absent: none kept). */
  proxyCounters?: ProxyCounterReader;
  /** The proxies' counters as the warm-up began: which links carry traffic (linkInto prefers those). */
  trafficBaseline?: ProxyCounters;
  /** The proxies' counters over the last few seconds: which links carry traffic now (preferred to the baseline). */
  recentTraffic?: RecentTraffic;
}

export interface Injected {
  /** The concrete target after selection, e.g. `processor-2` or `ingress->processor-1`. */
  target: string;
  /** Links (proxy names) and services this hurts, for checkers. */
  affects: string[];
  leader?: boolean;
  details?: Record<string, unknown>;
  /** Which proxies must meet traffic while it is in for it to count (faultsHitTraffic). */
  evidence?: EvidencePlan;
}

export interface Fault {
  readonly name: string;
  /** How the target reads in a schedule before selection, e.g. `leaderOf(0)`. */
  readonly describe: string;
  /** What it needs of a target beyond what its describe names (a fault hook, a service that survives data loss). */
  readonly needs?: readonly TargetRequirement[];
  inject(ctx: FaultContext): Promise<Injected>;
  heal(ctx: FaultContext, injected: Injected): Promise<void>;
  /**
   * How long its inject may take on this target, when the target says so (a declared
   * leadership transfer's own timeout): the schedule's bound on the inject is at least this.
   */
  injectBoundMs?(ctx: FaultContext): number | undefined;
}

export class FaultError extends LimboError {
  declare readonly code: 'E_FAULT_TARGET' | 'E_FAULT_UNKNOWN';
  constructor(code: 'E_FAULT_TARGET' | 'E_FAULT_UNKNOWN', message: string) {
    super(code, message);
  }
}
