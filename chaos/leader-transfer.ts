// Leadership moves while the old leader's appends are held back on their way to the log (an
// upstream toxic on its log link) and every replica reads the log late (downstream toxics):
// the old leader's proposals land after the new leader's announce and are fenced, the requests
// waiting on it must be answered at once (lost leadership) and resent, and the new leader —
// still catching up when the ingress first reaches it — must not answer for state it has not
// read yet. The fencing path must be seen to run (pathCovered), else the run proves nothing.
import {
  acknowledgedEffectsPresent,
  at,
  defineSuite,
  exactlyOnce,
  keysFreeAfterHeal,
  failoverTimeBounded,
  latency,
  leaderOf,
  link,
  noClientLeftHanging,
  noImpossibleErrors,
  pathCovered,
  pendingDrains,
  transferLeadership,
} from 'limbo';

export default defineSuite({
  name: 'leader-transfer',
  why: 'A leader deposed with appends in flight: fenced proposals are never acknowledged, waiters are answered.',
  topology: { processors: 3, partitions: 2 },
  // Counter adds hold their key up to 300 ms: every transfer meets keyed invocations mid-run,
  // which the new leader must resume (never-resumes leaves them holding the key forever).
  workload: {
    concurrency: 12,
    counterKeys: 8,
    mix: { call: 0.4, send: 0.3, counterAdd: 0.3 },
    counterHoldMs: 300,
  },
  schedule: [
    // Before each transfer, the appends of whoever leads partition 0 then are held back 250 ms
    // and every reply from the log 150 ms: its heartbeats take ~400 ms, within the 500 ms lease
    // and heartbeat deadline (same link), so it keeps its lease and proposes until the table
    // tells it, and what it sent last lands after its successor's announce.
    at('3s', latency(link(leaderOf({ partition: 0 }), 'log'), { latencyMs: 250 }, { stream: 'upstream' }), {
      for: '2500ms',
    }),
    ...[1, 2, 3].map((n) => at('3s', latency(`processor-${n}->log`, { latencyMs: 150 }), { for: '4s' })),
    at('4s', transferLeadership({ partition: 0 }), { for: '1s' }),
    at('6s', latency(link(leaderOf({ partition: 0 }), 'log'), { latencyMs: 250 }, { stream: 'upstream' }), {
      for: '2500ms',
    }),
    at('7s', transferLeadership({ partition: 0 }), { for: '1s' }),
  ],
  chaos: '11s',
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    failoverTimeBounded(),
    acknowledgedEffectsPresent(),
    noImpossibleErrors(),
    exactlyOnce(),
    keysFreeAfterHeal(),
    pathCovered({ metric: 'limbo_processor_stale_proposals_dropped_total', what: 'stale proposals fenced' }),
  ],
  catches: ['fenced-ack', 'never-resumes', 'lost-end-response'],
  timingDependentOn: ['reference:legacy'],
  skipOn: {
    restate:
      'transfer-leadership and the processor→log link are reference-only (no controller API, no separate log link)',
  },
});
