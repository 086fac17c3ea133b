// Slow durable appends between a processor and the log: calls get slow but must all finish,
// and nothing may be applied twice.
// Passes on both protocols: latency alone loses no notification, so the legacy bug stays
// hidden; the suite guards against timeouts turning slowness into duplicates or hangs.
import {
  at,
  defineSuite,
  exactlyOnce,
  latency,
  noClientLeftHanging,
  pendingDrains,
  spansEnd,
  traces,
} from 'limbo';

export default defineSuite({
  name: 'log-latency',
  why: 'A slow log slows calls down but loses none and applies each effect once.',
  topology: { processors: 2, partitions: 2 },
  workload: { concurrency: 8, mix: { call: 0.5, counterAdd: 0.5 } },
  schedule: [at('3s', latency('processor-1->log', { latencyMs: 300, jitterMs: 100 }), { for: '5s' })],
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 8000 }),
    pendingDrains(),
    exactlyOnce(),
    spansEnd({ withinMsAfterHeal: 8000 }),
    // The log hop seen from the log's side while the link is slow (the waterfall shows where
    // the time went: processor-1's append spans long, the log server's short).
    traces({
      name: 'logAppendsTracedDuringLatency',
      select: { service: 'log', name: 'log append', during: { fault: 'latency' } },
      expect: { count: { min: 1 }, status: 'ok' },
    }),
  ],
  skipOn: {
    restate:
      'Restate has no processor→log link of its own: log servers run in every node and bifrost replication shares `*->node-N` with every other fabric message',
  },
});
