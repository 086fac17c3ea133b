// A leader freezes (SIGSTOP) long enough to lose its lease; when it wakes it must not answer
// as leader, and the calls it held must be answered by its successor.
// reference:legacy fails it: the pause outlasts the ingress's keepalive (about 3 s), so the
// notification stream to the frozen leader is gone when it wakes and pushes what it applied
// as leader, and its successor never pushes for invocations it resumes. (A pause shorter
// than the keepalive can let the frozen leader's pushes through, so legacy may survive it.)
import {
  at,
  defineSuite,
  exactlyOnce,
  leaderOf,
  leadershipChanged,
  noClientLeftHanging,
  pause,
  pendingDrains,
} from 'limbo';

export default defineSuite({
  name: 'leader-pause',
  why: 'A paused leader is deposed; calls it held must still be answered, effects applied once.',
  topology: { processors: 3, partitions: 4 },
  workload: { concurrency: 12, mix: { call: 0.5, send: 0.2, counterAdd: 0.3 } },
  schedule: [at('4s', pause(leaderOf({ partition: 1 })), { for: '8s' })],
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 6000 }),
    pendingDrains(),
    leadershipChanged(),
    exactlyOnce(),
  ],
  expectedToFailOn: ['reference:legacy'],
});
