// A burst of clients arrives past the ingress's bound on pending requests: the excess must be
// refused at the door (503 with retry-after, nothing done), the rest served, and everything drain.
// reference:legacy passes it as a rule (no leader changes, so no notification is lost), but
// the burst may cost a leader its lease on a busy machine, and then the legacy ingress loses
// the notifications of what the new leader resumes: timing-dependent there.
import {
  acknowledgedEffectsPresent,
  defineSuite,
  exactlyOnce,
  keysFreeAfterHeal,
  noClientLeftHanging,
  noImpossibleErrors,
  pendingDrains,
  promql,
} from 'limbo';

export default defineSuite({
  name: 'ingress-overload',
  why: 'A burst past the ingress bound on pending requests: the excess is refused at once, the rest served, nothing hangs.',
  // The ingress holds at most 60 requests pending (--max-pending); the steady clients alone
  // hold at most 8, so only the burst reaches the bound.
  topology: { processors: 3, partitions: 4, ingressMaxPending: 60 },
  // 8 steady clients, and one burst of 120 counter adds within 150 ms (800 a second) over 8
  // keys, each add holding its key up to 200 ms: a key runs its adds one at a time, so however
  // fast the machine, the burst's adds queue and the ingress fills to its bound within tens of
  // ms and refuses the rest, while what the burst leaves behind (at most 60 requests) drains in
  // about two seconds. A longer burst above capacity would cost leaders their lease on a busy
  // machine and make this a different experiment (leader-kill's burst is that one). A refused
  // op is an honest `fail` (nothing happened): exactlyOnce holds the cluster to that for adds,
  // noClientLeftHanging never counts it, and errorAnswersBounded is left out because refusing
  // is the answer this suite asks for.
  workload: {
    concurrency: 8,
    counterKeys: 8,
    counterHoldMs: 200,
    mix: { call: 0.5, send: 0.3, counterAdd: 0.2 },
    bursts: { everyMs: 60_000, lengthMs: 150, ratePerSec: 800, firstAtMs: 3000, mix: { counterAdd: 1 } },
  },
  schedule: [],
  chaos: '5s',
  expect: [
    noClientLeftHanging(),
    pendingDrains(),
    exactlyOnce(),
    acknowledgedEffectsPresent(),
    noImpossibleErrors(),
    keysFreeAfterHeal(),
    // The refusal path ran: the bound was reached and requests were refused by it.
    promql({
      name: 'refusedAtMaxPending',
      query: 'sum(limbo_ingress_refused_total{limit="max_pending"})',
      expect: { min: 1 },
      at: 'end',
    }),
    promql({
      name: 'pendingDrainsPerPrometheus',
      query: 'sum({__name__=~"limbo_ingress_pending_requests|limbo_processor_pending_rpcs"})',
      expect: { max: 0 },
      at: 'end',
    }),
  ],
  // The legacy ingress loses replies only if the burst costs a leader its lease (see the top).
  timingDependentOn: ['reference:legacy'],
  // Other targets ignore topology.ingressMaxPending: the refusal this suite asserts never comes.
  onlyOn: {
    targets: ['reference', 'reference:legacy'],
    reason: 'sets the reference ingress bound on pending requests (topology.ingressMaxPending)',
  },
});
