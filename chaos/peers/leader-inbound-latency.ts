// 300 ms (± 100 ms) on the link into the current leader for 6 s: past a raft heartbeat
// (etcd: 100 ms) but inside its election timeout (1 s), and slow for the reference ingress's
// calls to that leader. Calls get slow; none may hang past the bound or apply twice.
import { at, defineSuite, exactlyOnce, latency, leaderOf, linkInto, noClientLeftHanging } from 'limbo';

export default defineSuite({
  name: 'leader-inbound-latency',
  why: 'A slow link into the leader slows calls down but loses none and applies each effect once.',
  topology: { processors: 3, partitions: 4 },
  workload: { concurrency: 12, mix: { call: 0.5, counterAdd: 0.5 } },
  schedule: [
    at('3s', latency(linkInto(leaderOf({ partition: 0 })), { latencyMs: 300, jitterMs: 100 }), { for: '6s' }),
  ],
  expect: [noClientLeftHanging({ withinMsAfterHeal: 6000 }), exactlyOnce()],
});
