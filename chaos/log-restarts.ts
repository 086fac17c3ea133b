// The log server (log, metadata and controller) dies twice with calls in flight, each time
// back 1.5 s later, then is restarted gracefully (SIGTERM, as for an upgrade) while processors
// heartbeat and read and appends arrive: every replica must resume its tail from exactly where
// it stopped, so that no announce, Invoke or End is lost across the reconnects, and every call
// is answered; the graceful stop must end its streams and exit within its grace period.
import {
  at,
  defineSuite,
  exactlyOnce,
  gracefulStops,
  keysFreeAfterHeal,
  kill,
  noClientLeftHanging,
  pendingDrains,
  restart,
} from 'limbo';

export default defineSuite({
  name: 'log-restarts',
  why: 'Two log kills and a graceful log restart: replicas resume their reads exactly, nothing is skipped, every call is answered.',
  topology: { processors: 2, partitions: 4 },
  workload: { concurrency: 12, counterKeys: 8, mix: { call: 0.5, send: 0.2, counterAdd: 0.3 } },
  schedule: [
    at('3s', kill('log'), { for: '1500ms' }),
    at('8s', kill('log'), { for: '1500ms' }),
    at('12s', restart('log')),
  ],
  chaos: '15s',
  expect: [
    noClientLeftHanging({ withinMsAfterHeal: 8000 }),
    pendingDrains(),
    exactlyOnce(),
    keysFreeAfterHeal(),
    gracefulStops(),
  ],
  catches: ['read-skips-after-reconnect'],
  timingDependentOn: ['reference:legacy'],
  skipOn: {
    restate:
      'Restate has no separate log/controller process: log servers and metadata run in every node (node kills are leader-kill and rolling-restart)',
  },
});
