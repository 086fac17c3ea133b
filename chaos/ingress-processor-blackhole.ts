// The ingress's link to one processor silently drops everything: only keepalive and
// per-attempt timeouts can notice, and the ingress must resend once the link heals.
import {
  at,
  blackhole,
  defineSuite,
  leaderOf,
  link,
  noClientLeftHanging,
  noGhostCompletions,
  pendingDrains,
  resendRateBounded,
  resendsObserved,
} from 'limbo';

export default defineSuite({
  name: 'ingress-processor-blackhole',
  why: 'A black-holed ingress→processor link must be detected and the requests resent.',
  topology: { processors: 2, partitions: 2 },
  workload: { concurrency: 12, mix: { call: 0.7, send: 0.3 } },
  schedule: [at('3s', blackhole(link('ingress', leaderOf({ partition: 0 }))), { for: '5s' })],
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    resendsObserved(),
    noGhostCompletions(),
    resendRateBounded(),
  ],
  catches: ['resend-storm'],
  expectedToFailOn: ['reference:legacy'],
  skipOn: {
    restate:
      "Restate has no ingress→processor link of its own: the ingress and the partition processors of a node share one process, and the only proxy in front of a node (`*->node-N`) carries every peer's fabric traffic (replication, metadata, gossip) too; chaos/restate/leader-inbound-cut.ts is the Restate form of this cut",
  },
});
