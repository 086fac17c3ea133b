// Where a leader was killed, paused, restarted or asked to transfer, leadership must have
// moved: the controller's or a processor's leadership-change counter went up.
import { PROCESS_FAULTS } from './failover-time-bounded.js';
import { metricNames } from '../protocol/names.js';
import type { FaultWindow } from '../run-data/run-data.js';
import type { Checker } from './checker.js';
import { windowCounterChecker } from './window-counter-check.js';

export interface LeadershipChangedOptions {
  graceMs?: number;
}

export function hitsLeader(w: FaultWindow): boolean {
  return w.leader === true && PROCESS_FAULTS.has(w.fault);
}

export function leadershipChanged(options: LeadershipChangedOptions = {}): Checker {
  return windowCounterChecker({
    name: 'leadershipChanged',
    metrics: [metricNames.controllerLeaderChangesTotal, metricNames.processorLeadershipChangesTotal],
    relevant: hitsLeader,
    what: 'leader kill, pause, restart or transfer',
    graceMs: options.graceMs ?? 5000,
  });
}
