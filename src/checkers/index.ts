// The checkers' public surface.
export * from './checker.js';
export * from './registry.js';
export { noClientLeftHanging, type NoClientLeftHangingOptions } from './no-client-left-hanging.js';
export { pendingDrains, type PendingDrainsOptions } from './pending-drains.js';
export { resendsObserved, type ResendsObservedOptions } from './resends-observed.js';
export { leadershipChanged, type LeadershipChangedOptions } from './leadership-changed.js';
export { gracefulStops } from './graceful-stops.js';
export { exactlyOnce } from './exactly-once.js';
export { idempotentRetriesAgree } from './idempotent-retries-agree.js';
export { faultsHitTraffic } from './faults-hit-traffic.js';
export { promql, promqlQueryOf, type PromqlOptions, type PromqlExpect, type PromqlQuery } from './promql.js';
export { partitionLeadership, leadershipTimeline } from './partition-leadership.js';
export { errorAnswersBounded, type ErrorAnswersBoundedOptions } from './error-answers-bounded.js';
export { noImpossibleErrors } from './no-impossible-errors.js';
export { acknowledgedEffectsPresent } from './acknowledged-effects-present.js';
export { resendRateBounded, type ResendRateBoundedOptions } from './resend-rate-bounded.js';
export { keysFreeAfterHeal } from './keys-free-after-heal.js';
export { latencyRecovers, type LatencyRecoversOptions } from './latency-recovers.js';
export { failoverTimeBounded, type FailoverTimeBoundedOptions } from './failover-time-bounded.js';
export { pathCovered, type PathCoveredOptions } from './path-covered.js';
export { spansEnd, type SpansEndOptions } from './spans-end.js';
export { noGhostCompletions, END_APPLIED_SPAN } from './no-ghost-completions.js';
export { traces, type TracesOptions } from './traces.js';
export {
  selectSpans,
  expectSpans,
  type SpanSelector,
  type SpanExpect,
  type TimeRef,
  type TextMatch,
} from './span-select.js';
export { serviceLevels, type ServiceLevels } from './service-levels.js';
