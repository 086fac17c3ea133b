// The log's disk fails its writes while every leader stays up, three ways: nothing of a failed
// write reaches the disk; every frame but half of the last one does (a torn write); all of it
// does and the error comes after (appends answered failed whose records are in the log). Each
// failed write fails the appends in it, the partition recovers from its file a moment later
// and fails again while the disk does. Every call must be answered once the disk writes again,
// no effect applied twice or lost: a leader must treat an append answered failed as maybe
// written (its End proposed again, fenced as a duplicate when the first one landed), and the
// ingress resend until an append goes through.
import {
  acknowledgedEffectsPresent,
  at,
  defineSuite,
  errorAnswersBounded,
  exactlyOnce,
  idempotentRetriesAgree,
  keysFreeAfterHeal,
  latencyRecovers,
  logWriteErrors,
  noClientLeftHanging,
  noGhostCompletions,
  noImpossibleErrors,
  pathCovered,
  pendingDrains,
} from 'limbo';

export default defineSuite({
  name: 'log-write-errors',
  why: 'A disk that fails the log’s writes (nothing, part or all of each write on disk), every leader up: calls wait, none is lost or applied twice.',
  topology: { processors: 3, partitions: 2 },
  workload: {
    concurrency: 10,
    counterKeys: 8,
    counterHoldMs: 50,
    mix: { call: 0.4, send: 0.2, counterAdd: 0.3, idempotentRetry: 0.1 },
  },
  schedule: [
    at('2s', logWriteErrors({ written: 'none' }), { for: '1500ms' }),
    at('5s', logWriteErrors({ written: 'torn' }), { for: '1500ms' }),
    at('8s', logWriteErrors({ written: 'all' }), { for: '1500ms' }),
  ],
  chaos: '15s',
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 8000 }),
    pendingDrains(),
    exactlyOnce(),
    acknowledgedEffectsPresent(),
    noImpossibleErrors(),
    errorAnswersBounded(),
    keysFreeAfterHeal(),
    latencyRecovers(),
    idempotentRetriesAgree(),
    noGhostCompletions(),
    // A write that reached the disk although answered failed, met by the writer's retry: an
    // invoke or End the log then holds twice, applied once.
    pathCovered({
      metric: 'limbo_processor_repeated_records_total',
      what: 'invokes and Ends a failed write left in the log, proposed again and kept once',
    }),
  ],
  // reference:legacy (seeds 1 and 2): the ingress appends each invocation itself and waits for a
  // push that a leader sends once; calls were left hanging (at seed 1 before any write failed).
  expectedToFailOn: ['reference:legacy'],
  skipOn: {
    restate: 'log-write-errors is a fault hook inside the reference cluster’s log server',
  },
});
