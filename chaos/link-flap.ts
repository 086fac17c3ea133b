// The ingress→processor link goes down and up repeatedly; each time in-flight requests are cut.
import {
  at,
  defineSuite,
  leaderOf,
  link,
  linkDown,
  noClientLeftHanging,
  noGhostCompletions,
  noImpossibleErrors,
  pendingDrains,
  resendRateBounded,
  resendsObserved,
} from 'limbo';

// The ingress's link to a partition's leader, chosen at each inject: a link to a processor
// that leads nothing carries no requests, and cutting it would test nothing.
const toLeaderOf = (partition: number) => link('ingress', leaderOf({ partition }));

export default defineSuite({
  name: 'link-flap',
  why: 'A flapping ingress→processor link must not leave any request behind.',
  topology: { processors: 2, partitions: 2 },
  workload: { concurrency: 12, mix: { call: 0.6, send: 0.4 } },
  schedule: [
    at('2s', linkDown(toLeaderOf(0)), { for: '1s' }),
    at('4s', linkDown(toLeaderOf(0)), { for: '1s' }),
    at('6s', linkDown(toLeaderOf(1)), { for: '1s' }),
    at('8s', linkDown(toLeaderOf(0)), { for: '1s' }),
  ],
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    resendsObserved(),
    noGhostCompletions(),
    noImpossibleErrors(),
    resendRateBounded(),
  ],
  catches: ['pending-gauge-leak'],
  expectedToFailOn: ['reference:legacy'],
  skipOn: {
    restate:
      'Restate has no ingress→processor link of its own (ingress and processors share a process; `*->node-N` carries all fabric traffic to a node)',
  },
});
