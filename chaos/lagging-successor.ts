// The followers read the log 800 ms late, then leadership moves to one of them: the new leader
// is behind what the old one acknowledged. Until it has caught up and leads it must answer
// "not leader" (the ingress resends), never "not found" for an invocation the client was told
// exists (Restate #4513 and #4587: stale followers answered 404 and the ingress took it as final).
import {
  acknowledgedEffectsPresent,
  at,
  defineSuite,
  failoverTimeBounded,
  followerLag,
  noClientLeftHanging,
  noImpossibleErrors,
  pendingDrains,
  transferLeadership,
} from 'limbo';

export default defineSuite({
  name: 'lagging-successor',
  why: 'Leadership moves to a follower that lags: it must never answer for state it has not read.',
  topology: { processors: 3, partitions: 2 },
  // Clients collect a send's result 300 ms after it was accepted (less than the followers' lag):
  // what the old leader acknowledged just before a transfer is attached to at its successor
  // while that has not read it yet.
  workload: { concurrency: 12, mix: { call: 0.3, send: 0.7 }, attachAfterMs: 300 },
  // Three rounds: the followers of the moment lag, then leadership moves to one of them (each
  // round lags whoever follows then, so every transfer lands on a node that is behind).
  schedule: [
    at('3s', followerLag({ partition: 0, latencyMs: 800 }), { for: '2500ms' }),
    at('4s', transferLeadership({ partition: 0 }), { for: '1s' }),
    at('6s', followerLag({ partition: 0, latencyMs: 800 }), { for: '2500ms' }),
    at('7s', transferLeadership({ partition: 0 }), { for: '1s' }),
    at('9s', followerLag({ partition: 0, latencyMs: 800 }), { for: '2500ms' }),
    at('10s', transferLeadership({ partition: 0 }), { for: '1s' }),
  ],
  chaos: '12s',
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    noImpossibleErrors(),
    acknowledgedEffectsPresent(),
    failoverTimeBounded(),
  ],
  catches: ['stale-follower-not-found'],
  timingDependentOn: ['reference:legacy'],
  skipOn: {
    restate: 'transfer-leadership and the processor→log links are reference-only',
    // etcd declares a leadership transfer, but follower-lag needs each follower's own link to
    // a log, and etcd members replicate among themselves: the lag is never injected.
    etcd: "follower-lag needs a follower's own link to the log; etcd members replicate among themselves",
  },
});
