// A leader dies with calls in flight; the ingress must resend to its successor.
// reference:legacy fails it: the new leader never notifies the ingress of the calls it resumes.
import {
  acknowledgedEffectsPresent,
  at,
  defineSuite,
  errorAnswersBounded,
  exactlyOnce,
  failoverTimeBounded,
  keysFreeAfterHeal,
  kill,
  leaderOf,
  leadershipChanged,
  noClientLeftHanging,
  noGhostCompletions,
  noImpossibleErrors,
  pendingDrains,
  promql,
  resendRateBounded,
  resendsObserved,
  spansEnd,
} from 'limbo';

export default defineSuite({
  name: 'leader-kill',
  why: 'A leader dies with calls in flight; the ingress must resend to its successor.',
  topology: { processors: 3, partitions: 4 },
  // An open loop: new calls keep arriving while the killed leader's partitions have none, as
  // real clients' would (closed-loop clients soon all wait on those partitions and stop
  // sending, so a reply lost only for what arrives during the failover was caught in about
  // three runs of four). ~150 ops/s × ~0.7 s without a leader × half the partitions: dozens
  // of calls and sends meet the failover in every run. 12 counter keys: keyed state on every
  // partition, whichever leader dies; each add holds its key up to 100 ms, so the killed
  // leader leaves keyed invocations mid-run (and queued behind them) for its successor.
  // A fifth of the calls, sends and adds are given up by their client 10-300 ms in and sent
  // again at once with the same idempotency key, as an SDK's own timeout does: some are
  // abandoned while the dead leader's partition has none, and each retry must be answered as
  // the one invocation (exactlyOnce, noClientLeftHanging) while the first may still run.
  // And one open-loop burst above capacity as the clients start: 200 more ops in 0.4 s
  // (500/s, two to three times what the cluster serves on two cores) fill the ingress's
  // pending requests and the keys' queues, and must all be answered with no error answer
  // (errorAnswersBounded's no-fault share), no resend storm and every add applied once. Its
  // backlog drains in 1-2 s, long before the kill (6.5 s later; on a machine so busy that it
  // took 6 s, a 300-op burst ran into the failover): ops still queued behind it then would be
  // charged to the failover time.
  workload: {
    ratePerSec: 150,
    concurrency: 16,
    counterKeys: 12,
    counterHoldMs: 100,
    mix: { call: 0.5, send: 0.3, counterAdd: 0.2 },
    giveUp: { fraction: 0.2, afterMs: [10, 300], retry: 'same-key' },
    bursts: { everyMs: 60_000, lengthMs: 400, ratePerSec: 500, firstAtMs: 250 },
  },
  schedule: [at('5s', kill(leaderOf({ partition: 0 })), { for: '3s' })],
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 5000 }),
    pendingDrains(),
    leadershipChanged(),
    resendsObserved(),
    exactlyOnce(),
    // From the traces: the calls the new leader finished reached their clients (legacy: ghost
    // completions), and every span of an invocation ended (the killed leader's are abandoned).
    noGhostCompletions(),
    spansEnd(),
    // The same drain, as the run's Prometheus saw it (what the dashboards and alerts show).
    promql({
      name: 'pendingDrainsPerPrometheus',
      query: 'sum({__name__=~"limbo_ingress_pending_requests|limbo_processor_pending_rpcs"})',
      expect: { max: 0 },
      at: 'end',
    }),
    errorAnswersBounded(),
    noImpossibleErrors(),
    acknowledgedEffectsPresent(),
    resendRateBounded(),
    keysFreeAfterHeal(),
    failoverTimeBounded(),
  ],
  catches: ['resend-storm', 'never-resumes', 'fenced-ack', 'lost-end-response'],
  // etcd 3.4.23 fails it since failoverTimeBounded joined (3 of 3 runs: CI, seeds 1, 2): the
  // calls a follower had forwarded to the killed leader wait for etcd's request timeout
  // (7.0 s) and are answered "request timed out", past the 6 s failover bound. docs/etcd.md.
  expectedToFailOn: ['reference:legacy', 'etcd'],
  // restate (1.7.12) failed it once in six CI runs: the heal starts the killed
  // node again, and for a few hundred milliseconds its ingress answers 404 "service not found"
  // for a registered service (4 calls; noImpossibleErrors, errorAnswersBounded) — the same
  // Restate behaviour startup-race finds. A probe saw it in 1 of 10 restarts. Timing-dependent,
  // so --expect-documented accepts either verdict on restate. docs/restate.md.
  timingDependentOn: ['restate'],
});
