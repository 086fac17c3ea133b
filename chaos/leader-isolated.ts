// A network partition of the leader: every link into it and out of it holds its bytes for 4 s
// (isolate, how 'hold': what a real partition does to open TCP connections). The leader cannot
// renew its lease, the controller cannot hear it, the ingress cannot reach it: its partitions
// must move to a new leader within the failover level, and when the partition heals, the old
// leader's held appends and replies — delivered late, all at once — must not apply twice or
// answer a client with a stale result.
import {
  acknowledgedEffectsPresent,
  at,
  defineSuite,
  exactlyOnce,
  failoverTimeBounded,
  idempotentRetriesAgree,
  isolate,
  keysFreeAfterHeal,
  leaderOf,
  leadershipChanged,
  noClientLeftHanging,
  noImpossibleErrors,
  pendingDrains,
} from 'limbo';

export default defineSuite({
  name: 'leader-isolated',
  why: 'The leader is cut off from everything for 4 s; its partitions must move, and its late bytes must not count twice.',
  topology: { processors: 3, partitions: 4 },
  workload: {
    ratePerSec: 120,
    concurrency: 12,
    counterKeys: 8,
    counterHoldMs: 100,
    mix: { call: 0.4, send: 0.2, counterAdd: 0.3, idempotentRetry: 0.1 },
  },
  schedule: [at('4s', isolate(leaderOf({ partition: 0 })), { for: '4s' })],
  chaos: '12s',
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    leadershipChanged(),
    failoverTimeBounded(),
    exactlyOnce(),
    idempotentRetriesAgree(),
    acknowledgedEffectsPresent(),
    keysFreeAfterHeal(),
    noImpossibleErrors(),
  ],
  // The legacy new leader never tells the ingress about the calls it takes over: they hang.
  // NATS JetStream 2.9 keeps its stream leader through a 4 s partition: its raft election
  // timeout is 4–9 s, so no new leader is elected before the heal and leadershipChanged fails
  // (clients wait for the heal, within the bounds; docs/nats.md).
  expectedToFailOn: ['reference:legacy', 'nats'],
  // etcd 3.4 failed it in its first run (seed 1): requests a member had proposed through the
  // isolated leader waited for etcd's request timeout (7.0 s) past the 6 s failover bound — the
  // cause leader-kill and leader-down document on etcd (docs/etcd.md). Seen once: either verdict.
  timingDependentOn: ['etcd'],
});
