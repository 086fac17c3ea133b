// The controller's partition-table updates to the ingress go wrong while leadership moves:
// dropped (a leader killed meanwhile, still down when updates flow again), then reordered (an
// older table arrives after a newer one), then delayed by a second. The ingress must route by
// the newest table it has, find leaders it was not told of (NOT_LEADER names them), learn the
// current table soon after updates flow again, and never take an older table for a newer one:
// every call answered, each effect applied once.
import {
  acknowledgedEffectsPresent,
  at,
  defineSuite,
  exactlyOnce,
  failoverTimeBounded,
  kill,
  leaderOf,
  noClientLeftHanging,
  noImpossibleErrors,
  partitionLeadership,
  pathCovered,
  pendingDrains,
  tableUpdates,
  transferLeadership,
} from 'limbo';

export default defineSuite({
  name: 'table-updates',
  why: 'Table updates to the ingress dropped, reordered or late: the ingress still finds every leader and catches up.',
  topology: { processors: 3, partitions: 2 },
  workload: { concurrency: 10, counterKeys: 8, mix: { call: 0.5, send: 0.2, counterAdd: 0.3 } },
  schedule: [
    // Dropped for 2 s: partition 0 moves, partition 1's leader dies and stays down 6 s — long
    // after updates flow again, so no later change brings the ingress the table it missed.
    at('1s', tableUpdates({ how: 'drop' }), { for: '2s' }),
    at('1500ms', transferLeadership({ partition: 0 }), { for: '500ms' }),
    at('2s', kill(leaderOf({ partition: 1 })), { for: '6s' }),
    // Reordered: each update held until the next has gone first.
    at('9s', tableUpdates({ how: 'reorder', delayMs: 1500 }), { for: '3s' }),
    at('9500ms', transferLeadership({ partition: 0 }), { for: '500ms' }),
    at('10s', transferLeadership({ partition: 1 }), { for: '500ms' }),
    // Delayed a second each.
    at('13s', tableUpdates({ how: 'delay', delayMs: 1000 }), { for: '3s' }),
    at('13500ms', transferLeadership({ partition: 0 }), { for: '500ms' }),
  ],
  chaos: '17s',
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    // The killed leader's requests: the ingress must learn its successor once updates flow
    // again, not at the next change (before the controller's catch-up, 8.4 s at seed 1).
    failoverTimeBounded(),
    exactlyOnce(),
    acknowledgedEffectsPresent(),
    noImpossibleErrors(),
    partitionLeadership(),
    pathCovered({
      metric: 'limbo_ingress_stale_tables_total',
      what: 'older tables set aside by the ingress',
    }),
  ],
  // reference:legacy (seed 1): 7 ops left hanging across the leadership moves (the pushes a new
  // leader never sends), failoverTimeBounded 25.6 s.
  expectedToFailOn: ['reference:legacy'],
  skipOn: {
    restate: 'table-updates is a fault hook inside the reference cluster’s controller',
  },
});
