// Connections from the ingress to a processor are reset: replies in flight are lost and must
// be recovered by resending on a new connection.
import {
  at,
  defineSuite,
  errorAnswersBounded,
  idempotentRetriesAgree,
  leaderOf,
  link,
  noClientLeftHanging,
  noGhostCompletions,
  noImpossibleErrors,
  pendingDrains,
  resendsObserved,
  resetPeer,
} from 'limbo';

export default defineSuite({
  name: 'ingress-processor-reset',
  why: 'Resets on the ingress→processor link lose replies; resends must recover every call.',
  topology: { processors: 2, partitions: 2 },
  // Some sends are repeated by their client with the same key (sendRetry): the ingress's path
  // for a send it already accepted must account for it like any other (pendingDrains).
  workload: { concurrency: 12, mix: { call: 0.5, send: 0.2, sendRetry: 0.1, idempotentRetry: 0.2 } },
  schedule: [
    at('3s', resetPeer(link('ingress', leaderOf({ partition: 0 })), { timeoutMs: 200 }), { for: '4s' }),
  ],
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    resendsObserved(),
    noGhostCompletions(),
    noImpossibleErrors(),
    errorAnswersBounded(),
    idempotentRetriesAgree(),
  ],
  catches: ['pending-gauge-leak', 'idempotency-key-ignored'],
  expectedToFailOn: ['reference:legacy'],
  skipOn: {
    restate:
      'Restate has no ingress→processor link of its own (ingress and processors share a process; `*->node-N` carries all fabric traffic to a node)',
  },
});
