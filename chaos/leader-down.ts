// A leader dies and stays down for long: its partitions must fail over within the bound,
// however long the node is gone (the failure detector's timeout is what clients wait).
import {
  at,
  defineSuite,
  exactlyOnce,
  failoverTimeBounded,
  kill,
  leaderOf,
  noClientLeftHanging,
  pendingDrains,
} from 'limbo';

export default defineSuite({
  name: 'leader-down',
  why: 'A leader down for 10 s: calls must move to a new leader within the failover bound.',
  topology: { processors: 3, partitions: 2 },
  workload: { concurrency: 12, counterKeys: 8, mix: { call: 0.6, counterAdd: 0.4 } },
  schedule: [at('3s', kill(leaderOf({ partition: 0 })), { for: '10s' })],
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    failoverTimeBounded(),
    exactlyOnce(),
  ],
  catches: ['slow-failure-detection'],
  // etcd 3.4.23 fails it (its new failoverTimeBounded) (3 of 3 runs: CI, seeds 1, 2): the
  // calls a follower had forwarded to the killed leader wait for etcd's request timeout
  // (7.0 s) and are answered "request timed out", past the 6 s failover bound. docs/etcd.md.
  expectedToFailOn: ['etcd'],
  // reference:legacy usually fails it (its new leader never tells the ingress about the call it
  // resumes), but a 10 s kill leaves few calls between their Invoke and their End: seeds 1, 2,
  // 3, 11 and 12 failed with one call left hanging, seeds 4 and 649939989 (a CI run) passed. So
  // the legacy verdict here is timing-dependent; startup-race and leader-kill catch it every time.
  timingDependentOn: ['reference:legacy'],
});
