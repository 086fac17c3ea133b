// A brief partition (3.5 s: long enough for keepalive to declare the connection dead) between
// the ingress and a processor, then a heal with load after it: the ingress must redial and serve the following calls as fast
// as before the fault (Restate #2565: every request timed out after short partitions).
import {
  at,
  defineSuite,
  latencyRecovers,
  leaderOf,
  link,
  noClientLeftHanging,
  pendingDrains,
  resendRateBounded,
  timeout,
} from 'limbo';

export default defineSuite({
  name: 'partition-heal',
  why: 'After a brief partition heals, calls on that link must be as fast as before it.',
  topology: { processors: 2, partitions: 2 },
  workload: { concurrency: 12, mix: { call: 0.7, send: 0.3 } },
  schedule: [
    at('3s', timeout(link('ingress', leaderOf({ partition: 0 })), { timeoutMs: 0 }), { for: '3500ms' }),
  ],
  // Load for 8 s after the heal: the wedge shows in the calls made then.
  chaos: '14s',
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    latencyRecovers(),
    resendRateBounded(),
  ],
  catches: ['dead-connection-after-heal'],
  expectedToFailOn: ['reference:legacy'],
  skipOn: {
    restate:
      'Restate has no ingress→processor link of its own (ingress and processors share a process; `*->node-N` carries all fabric traffic to a node)',
  },
});
