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
  // Restate 1.7.12 failed 2 of 3 runs since noImpossibleErrors joined the suite (CI, seed 1;
  // seed 2 passed): calls that reach a node just restarted by the heal are answered 404
  // "service 'Echo' not found, make sure to register the service before calling it" — a final
  // error for a service that is registered — and once 4 calls were still open 8 s after the
  // heal. See docs/restate.md.
  timingDependentOn: ['restate'],
});
