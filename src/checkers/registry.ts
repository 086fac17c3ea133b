// Checkers by name, so suites written as data (and `limbo explore`) can name them:
// registry entry = name → factory(options) → Checker.
import type { Checker } from './checker.js';
import { exactlyOnce } from './exactly-once.js';
import { faultsHitTraffic } from './faults-hit-traffic.js';
import { idempotentRetriesAgree } from './idempotent-retries-agree.js';
import { leadershipChanged } from './leadership-changed.js';
import { noClientLeftHanging } from './no-client-left-hanging.js';
import { pendingDrains } from './pending-drains.js';
import { promql, type PromqlOptions } from './promql.js';
import { resendsObserved } from './resends-observed.js';
import { acknowledgedEffectsPresent } from './acknowledged-effects-present.js';
import { errorAnswersBounded } from './error-answers-bounded.js';
import { partitionLeadership } from './partition-leadership.js';
import { serviceLevels, type ServiceLevels } from './service-levels.js';
import { failoverTimeBounded } from './failover-time-bounded.js';
import { keysFreeAfterHeal } from './keys-free-after-heal.js';
import { latencyRecovers } from './latency-recovers.js';
import { noImpossibleErrors } from './no-impossible-errors.js';
import { pathCovered, type PathCoveredOptions } from './path-covered.js';
import { resendRateBounded } from './resend-rate-bounded.js';
import { noGhostCompletions } from './no-ghost-completions.js';
import { spansEnd } from './spans-end.js';
import { gracefulStops } from './graceful-stops.js';
import { traces, type TracesOptions } from './traces.js';

export type CheckerFactory = (options?: Record<string, unknown>) => Checker;

const registry = new Map<string, CheckerFactory>();

export function registerChecker(name: string, factory: CheckerFactory): void {
  if (registry.has(name)) throw new Error(`checker ${name} is already registered`);
  registry.set(name, factory);
}

export function checkerFactory(name: string): CheckerFactory | undefined {
  return registry.get(name);
}

export function checkerNames(): string[] {
  return [...registry.keys()].sort();
}

registerChecker('noClientLeftHanging', (o) => noClientLeftHanging(o));
registerChecker('pendingDrains', (o) => pendingDrains(o));
registerChecker('resendsObserved', (o) => resendsObserved(o));
registerChecker('leadershipChanged', (o) => leadershipChanged(o));
registerChecker('exactlyOnce', () => exactlyOnce());
registerChecker('idempotentRetriesAgree', () => idempotentRetriesAgree());
registerChecker('faultsHitTraffic', () => faultsHitTraffic());
registerChecker('promql', (o) => promql(o as unknown as PromqlOptions));
registerChecker('errorAnswersBounded', (o) => errorAnswersBounded(o));
registerChecker('noImpossibleErrors', () => noImpossibleErrors());
registerChecker('acknowledgedEffectsPresent', () => acknowledgedEffectsPresent());
registerChecker('resendRateBounded', (o) => resendRateBounded(o));
registerChecker('keysFreeAfterHeal', () => keysFreeAfterHeal());
registerChecker('latencyRecovers', (o) => latencyRecovers(o));
registerChecker('failoverTimeBounded', (o) => failoverTimeBounded(o));
registerChecker('serviceLevels', (o) => {
  const slo = o as Partial<ServiceLevels>;
  for (const k of ['failoverMs', 'p99DuringFaultMs', 'recoveryAfterHealMs'] as const)
    if (typeof slo[k] !== 'number') throw new Error(`serviceLevels needs ${k} (a number of ms)`);
  return serviceLevels(slo as ServiceLevels);
});
registerChecker('pathCovered', (o) => pathCovered(o as unknown as PathCoveredOptions));
registerChecker('spansEnd', (o) => spansEnd(o));
registerChecker('gracefulStops', () => gracefulStops());
registerChecker('noGhostCompletions', () => noGhostCompletions());
registerChecker('partitionLeadership', (o) => partitionLeadership(o));
registerChecker('traces', (o) => traces(o as unknown as TracesOptions));
