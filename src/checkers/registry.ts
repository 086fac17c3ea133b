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
import { noGhostCompletions } from './no-ghost-completions.js';
import { spansEnd } from './spans-end.js';
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
registerChecker('spansEnd', (o) => spansEnd(o));
registerChecker('noGhostCompletions', () => noGhostCompletions());
registerChecker('traces', (o) => traces(o as unknown as TracesOptions));
