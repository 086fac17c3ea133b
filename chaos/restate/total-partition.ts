// Restate only: every node cut off from every other for 20 s (the inbound
// proxy of each node's fabric port down), then healed. After the heal every partition must
// have exactly one leader and calls to every partition must succeed again within a bound.
// Seen in a probe: one partition stuck between candidate and leader for minutes after the
// heal, once in two runs (partitionLeadership catches that, timing-dependent). What limbo saw
// most times instead (seeds 3 and 5 and earlier CI runs): the calls in flight when the
// partition began (5-7) completed in Restate (`sys_invocation` status completed) but their
// clients never got the answer, and gave up after 30 s, 9 s after the heal. Once (seed
// 573661702) the 12 calls in flight were all answered within 15 s of the heal and every
// partition had a leader in time: the suite passed. Restate's documented verdict here is
// either.
// Calls go to random partitions (plain calls) and to 16 counter keys spread over the 8
// partitions, so a stuck partition leaves calls hanging past the bound.
import { at, defineSuite, linkDown, noClientLeftHanging, partitionLeadership } from 'limbo';

export default defineSuite({
  name: 'restate-total-partition',
  why: 'After a 20 s total partition heals, every partition needs one leader and must serve again.',
  topology: { processors: 3, partitions: 8 },
  workload: { concurrency: 12, counterKeys: 16, mix: { call: 0.5, send: 0.2, counterAdd: 0.3 } },
  schedule: [
    at('3s', linkDown('*->node-1'), { for: '20s' }),
    at('3s', linkDown('*->node-2'), { for: '20s' }),
    at('3s', linkDown('*->node-3'), { for: '20s' }),
  ],
  converge: '20s',
  expect: [noClientLeftHanging({ withinMsAfterHeal: 15_000 }), partitionLeadership({ stuckAfterMs: 10_000 })],
  onlyOn: { targets: ['restate'], reason: 'partitions the fabric of a Restate cluster (`*->node-N`)' },
  timingDependentOn: ['restate'],
});
