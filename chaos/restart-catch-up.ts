// A leader restarts while its log link is slow (1.5 s: longer than the ingress's 1 s backoff
// cap, so its resends reach the node while it replays), so the restarted node replays late.
// Until it has caught up and leads again it must answer "not leader" (the ingress resends),
// never "not found" for an invocation the cluster already accepted (Restate #4513 / #4587).
import {
  acknowledgedEffectsPresent,
  at,
  defineSuite,
  latency,
  leaderOf,
  link,
  noClientLeftHanging,
  noImpossibleErrors,
  pendingDrains,
  restart,
} from 'limbo';

export default defineSuite({
  name: 'restart-catch-up',
  why: 'A restarted leader that is still replaying the log must never answer "not found".',
  topology: { processors: 3, partitions: 2 },
  workload: { concurrency: 12, mix: { call: 0.3, send: 0.7 } },
  schedule: [
    at('2s', latency(link(leaderOf({ partition: 0 }), 'log'), { latencyMs: 1500 }), { for: '5s' }),
    at('2500ms', restart(leaderOf({ partition: 0 })), { for: '1s' }),
  ],
  chaos: '9s',
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    noImpossibleErrors(),
    acknowledgedEffectsPresent(),
  ],
  catches: ['stale-follower-not-found'],
  timingDependentOn: ['reference:legacy'],
  skipOn: {
    restate: 'the processor→log link is reference-only (Restate has no separate log link)',
  },
});
