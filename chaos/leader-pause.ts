// A leader freezes (SIGSTOP) long enough to lose its lease; when it wakes it must not answer
// as leader, and the calls it held must be answered by its successor.
// reference:legacy usually fails it, but not always: its successor never pushes for the
// invocations it resumes, yet the frozen leader, on waking, applies what was appended
// while it slept as if it still led and pushes those notifications itself — and they reach
// the ingress whenever its resubscription, held open across the pause, wins the race.
// Seen: 4 of 5 legacy runs failed. So legacy's verdict here is timing-dependent, not a
// documented failure; startup-race and leader-kill are the deterministic legacy catches.
import {
  at,
  defineSuite,
  exactlyOnce,
  failoverTimeBounded,
  leaderOf,
  leadershipChanged,
  noClientLeftHanging,
  noGhostCompletions,
  noImpossibleErrors,
  pause,
  pendingDrains,
} from 'limbo';

export default defineSuite({
  name: 'leader-pause',
  why: 'A paused leader is deposed; calls it held must still be answered, effects applied once.',
  topology: { processors: 3, partitions: 4 },
  workload: { concurrency: 12, mix: { call: 0.5, send: 0.2, counterAdd: 0.3 } },
  schedule: [at('4s', pause(leaderOf({ partition: 1 })), { for: '8s' })],
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    leadershipChanged(),
    exactlyOnce(),
    // From the traces: an End applied while its client still waited is a lost reply, named.
    noGhostCompletions(),
    noImpossibleErrors(),
    failoverTimeBounded(),
  ],
  // etcd (3.4.23, declared in targets/etcd.limbo.ts) failed it in 1 of 7 runs (seed 21): the 4
  // calls that reached the leader just as it froze were answered "etcdserver: request timed
  // out" 7 s after it woke (its request timeout, 5 s + 2 election timeouts), past the 6 s
  // bound; their effects were right (exactlyOnce passed). See docs/etcd.md.
  // NATS JetStream (targets/nats.limbo.ts) usually elects a new stream leader within the 8 s
  // pause, but its raft election timeout is drawn from 4–9 s: when both followers draw past
  // the heal, the paused leader simply wakes up leading and leadershipChanged fails, with
  // every op answered and every effect applied once (docs/nats.md).
  catches: ['lost-end-response'],
  timingDependentOn: ['reference:legacy', 'etcd', 'nats'],
});
