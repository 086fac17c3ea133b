// Wall clocks stepped, one service at a time, as an NTP step or a VM restored from a snapshot
// does: the leader of partition 0 two hours ahead, then another processor two hours behind,
// then the ingress and the log a day ahead and behind. The steady clock (performance.now) does
// not move. Leases, heartbeats, deadlines and retention must not be timed on the wall clock:
// no leadership churn, every call answered, and every output the cluster acknowledged still
// there when the client attaches to it (a retention measured on a clock that jumped ahead
// would forget them).
import {
  acknowledgedEffectsPresent,
  at,
  clockStep,
  defineSuite,
  exactlyOnce,
  leaderOf,
  noClientLeftHanging,
  noImpossibleErrors,
  partitionLeadership,
  pendingDrains,
  randomOf,
} from 'limbo';

const hour = 3_600_000;

export default defineSuite({
  name: 'clock-step',
  why: 'A service’s wall clock stepped hours ahead or behind: nothing is timed by it, no output is forgotten.',
  topology: { processors: 3, partitions: 2 },
  // Sends attached to 1.5 s later: outputs are read back after their invocation completed.
  workload: {
    concurrency: 10,
    counterKeys: 8,
    mix: { call: 0.4, send: 0.3, counterAdd: 0.3 },
    attachAfterMs: 1500,
  },
  schedule: [
    at('2s', clockStep(leaderOf({ partition: 0 }), { offsetMs: 2 * hour }), { for: '3s' }),
    at('6s', clockStep(randomOf('processor'), { offsetMs: -2 * hour }), { for: '3s' }),
    at('10s', clockStep(randomOf('ingress'), { offsetMs: 24 * hour }), { for: '2s' }),
    at('13s', clockStep(randomOf('log'), { offsetMs: -24 * hour }), { for: '2s' }),
  ],
  chaos: '16s',
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    exactlyOnce(),
    acknowledgedEffectsPresent(),
    noImpossibleErrors(),
    partitionLeadership(),
  ],
  skipOn: {
    restate: 'clock-step is a fault hook inside the reference cluster’s services',
  },
});
