// limbo's public API: what chaos suites and other programs import as `limbo`.
export { metricNames, spanAttributes, spanNames } from './protocol/names.js';
export type { ResendReason } from './protocol/names.js';

// Suites
export { defineSuite, type Suite, type SuiteSpec } from './runner/suite.js';
export { at, type ScheduleEntry } from './faults/schedule.js';
export type { Duration } from './util/duration.js';
export type { WorkloadSpec, OpMix } from './workload/workload.js';
export type { Topology, Target, StartedTarget, ServiceHandle, TargetContext } from './targets/target.js';

// Declarative targets (bring your own system: targets/*.limbo.ts)
export {
  defineTarget,
  type TargetDeclaration,
  type ServiceDeclaration,
  type LinkDeclaration,
  type ClientDeclaration,
  type LeadershipDeclaration,
  type SignalDeclaration,
  type WaitStrategy,
} from './targets/declarative/declaration.js';
export type { ClientApi, ClientOp, ClientHttpRequest } from './workload/client-api.js';
export { defineClientAdapter } from './workload/client-adapter.js';
export type {
  ClientAdapter,
  ClientEndpoint,
  ClientSession,
  PerformContext,
  PerformResult,
} from './workload/client-adapter.js';
export type { HttpAnswer } from './workload/http-client.js';

// Faults and selectors
export type { Fault, FaultContext, Injected } from './faults/fault.js';
export {
  leaderOf,
  randomOf,
  allOf,
  link,
  linkInto,
  type ServiceSelector,
  type LinkSelector,
} from './faults/selectors.js';
export {
  toxicFault,
  latency,
  bandwidth,
  timeout,
  blackhole,
  resetPeer,
  slowClose,
  slicer,
  limitData,
  linkDown,
  type ToxicOptions,
} from './faults/toxic-faults.js';
export {
  kill,
  pause,
  restart,
  transferLeadership,
  clientsBeforeProcessors,
} from './faults/process-faults.js';
export { followerLag } from './faults/follower-lag.js';
export { isolate, type IsolateOptions } from './faults/isolate.js';
export {
  hookFault,
  logAppendErrors,
  logWriteErrors,
  slowFsync,
  tableUpdates,
  leadershipStepFailure,
  clockStep,
  restartWithDataLoss,
  type LeadershipStep,
} from './faults/service-faults.js';
export type { EvidencePlan } from './faults/evidence.js';
export { registerFault, createFault, faultNames } from './faults/registry.js';

// Checkers
export {
  noClientLeftHanging,
  pendingDrains,
  resendsObserved,
  leadershipChanged,
  gracefulStops,
  exactlyOnce,
  idempotentRetriesAgree,
  faultsHitTraffic,
  promql,
  type PromqlOptions,
  type PromqlExpect,
  spansEnd,
  noGhostCompletions,
  traces,
  type SpansEndOptions,
  type TracesOptions,
  type SpanSelector,
  type SpanExpect,
  type TimeRef,
  partitionLeadership,
  errorAnswersBounded,
  noImpossibleErrors,
  acknowledgedEffectsPresent,
  resendRateBounded,
  keysFreeAfterHeal,
  latencyRecovers,
  failoverTimeBounded,
  serviceLevels,
  type ServiceLevels,
  pathCovered,
  registerChecker,
  checkerNames,
  combineVerdicts,
  type Checker,
  type CheckResult,
  type Verdict,
  type Evidence,
} from './checkers/index.js';
export type {
  RunData,
  HistoryOp,
  SeriesSample,
  FaultWindow,
  PhaseTimes,
  RunSpan,
  OpenSpanMark,
} from './run-data/run-data.js';

// Running
export {
  runSuite,
  runSuiteOutcome,
  type RunSuiteOptions,
  type SuiteRunResult,
  type SuiteRunOutcome,
  type Progress,
} from './runner/run-suite.js';
export { createTarget, registerTarget, targetNames } from './targets/registry.js';
