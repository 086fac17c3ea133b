// The original report's scenario: clients call before any processor leads. With the legacy
// protocol the leader that finally starts never notifies the ingress, so those calls hang.
import {
  at,
  clientsBeforeProcessors,
  defineSuite,
  noClientLeftHanging,
  noGhostCompletions,
  noImpossibleErrors,
  pendingDrains,
  spansEnd,
} from 'limbo';

export default defineSuite({
  name: 'startup-race',
  why: 'Clients call before any processor is up; every call must be answered once they are.',
  // Many partitions and clients: the legacy notification is lost per partition, depending on
  // whether the ingress subscribed before the new leader applied; more partitions, more chances.
  topology: { processors: 2, partitions: 8 },
  workload: { concurrency: 32, mix: { call: 0.7, send: 0.3 } },
  schedule: [at('0s', clientsBeforeProcessors(), { for: '3s' })],
  // Keep calling for a while once the processors are up, so the run also shows they serve.
  chaos: '8s',
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 8000 }),
    pendingDrains(),
    // From the traces: the legacy leader applies the End and the reply never reaches the client.
    noGhostCompletions(),
    spansEnd({ withinMsAfterHeal: 8000 }),
    noImpossibleErrors(),
  ],
  catches: ['lost-submit-notification'],
  expectedToFailOn: ['reference:legacy'],
});
