// The ingress's link to one processor silently drops everything: only keepalive and
// per-attempt timeouts can notice, and the ingress must resend once the link heals.
import { at, blackhole, defineSuite, noClientLeftHanging, pendingDrains, resendsObserved } from 'limbo';

export default defineSuite({
  name: 'ingress-processor-blackhole',
  why: 'A black-holed ingress→processor link must be detected and the requests resent.',
  topology: { processors: 2, partitions: 2 },
  workload: { concurrency: 12, mix: { call: 0.7, send: 0.3 } },
  schedule: [at('3s', blackhole('ingress->processor-1'), { for: '5s' })],
  expect: [noClientLeftHanging({ withinMsAfterHeal: 6000 }), pendingDrains(), resendsObserved()],
  expectedToFailOn: ['reference:legacy'],
});
