// Every processor restarts in turn, as in a deploy: leadership moves each time and every call
// must still be answered exactly once.
import {
  acknowledgedEffectsPresent,
  at,
  defineSuite,
  errorAnswersBounded,
  exactlyOnce,
  failoverTimeBounded,
  keysFreeAfterHeal,
  leaderOf,
  gracefulStops,
  leadershipChanged,
  noClientLeftHanging,
  noGhostCompletions,
  noImpossibleErrors,
  pendingDrains,
  restart,
} from 'limbo';

export default defineSuite({
  name: 'rolling-restart',
  why: 'A rolling restart of the processors must not leave any client hanging.',
  topology: { processors: 3, partitions: 4 },
  workload: { concurrency: 12, counterKeys: 12, mix: { call: 0.5, send: 0.2, counterAdd: 0.3 } },
  schedule: [
    // Whoever leads partitions 0, 1 and 2 at that moment (three restarts, one after another).
    at('2s', restart(leaderOf({ partition: 0 })), { for: '1s' }),
    at('5s', restart(leaderOf({ partition: 1 })), { for: '1s' }),
    at('8s', restart(leaderOf({ partition: 2 })), { for: '1s' }),
  ],
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    exactlyOnce(),
    leadershipChanged(),
    // From the traces: an End applied while its client still waited is a lost reply, named.
    noGhostCompletions(),
    errorAnswersBounded(),
    noImpossibleErrors(),
    acknowledgedEffectsPresent(),
    keysFreeAfterHeal(),
    failoverTimeBounded(),
    // A restart is SIGTERM: each processor must exit on it within the grace period (one that
    // waits on replies it dropped is SIGKILLed instead).
    gracefulStops(),
  ],
  catches: ['reply-lost-on-shutdown', 'lost-leadership-is-final'],
  // etcd 3.4.23 fails it since the detection checks joined (3 of 3 runs: CI, seeds 1, 2): its
  // gRPC gateway answers 408 "grpc: the client connection is closing" to 2-7 % of the calls
  // in flight at each member's restart (errorAnswersBounded, noImpossibleErrors), and a few
  // calls wait out the 7 s request timeout. docs/etcd.md.
  expectedToFailOn: ['reference:legacy', 'etcd'],
  // restate (1.7.12) failed it in 2 of 3 runs (seeds 4, 5; seed 21 passed): 1-3 of 350-500
  // calls made while a node was shutting down (SIGTERM, shutdown-timeout 5 s) and restarting
  // ended 8-9 s later, past the 6 s bound (their invocation ids are in the verdict). Timing-
  // dependent, so --expect-documented accepts either verdict on restate.
  timingDependentOn: ['restate'],
});
