// After the heal and convergence, nothing may still be waiting inside the system: the
// ingress's pending client requests and each leader's pending RPCs must be back at 0. A series
// whose last sample predates the heal (its process died and stayed dead) says nothing about
// the end state and is left out; no usable series at all is inconclusive. The end is the
// deadline: samples after it (once the runner has aborted open client requests) are ignored.
import { metricNames } from '../protocol/names.js';
import { finalHealMs, type RunData, type SeriesSample } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { groupSeries } from './series-math.js';

export interface PendingDrainsOptions {
  metrics?: string[];
}

export function pendingDrains(options: PendingDrainsOptions = {}): Checker {
  const names = options.metrics ?? [metricNames.ingressPendingRequests, metricNames.processorPendingRpcs];
  const name = 'pendingDrains';
  return {
    name,
    needs: names,
    check(run: RunData): CheckResult {
      const heal = finalHealMs(run) ?? 0;
      // Judged at the deadline: later samples (after the runner aborted open ops) say nothing.
      const deadline = run.phases.deadlineMs ?? Number.POSITIVE_INFINITY;
      const last: SeriesSample[] = [];
      const stale: string[] = [];
      for (const [key, g] of groupSeries(run.series, names)) {
        const upTo = g.filter((x) => x.tMs <= deadline);
        const s = upTo[upTo.length - 1];
        if (s === undefined) continue;
        if (s.tMs < heal) stale.push(key);
        else last.push(s);
      }
      if (last.length === 0)
        return result(name, 'inconclusive', `no samples of ${names.join(', ')} after the heal`, {
          details: { staleSeries: stale },
        });
      const stuck = last.filter((s) => s.value !== 0);
      const details = { seriesChecked: last.length, staleSeries: stale };
      if (stuck.length === 0)
        return result(name, 'pass', `${last.length} pending gauges back at 0`, { details });
      return result(
        name,
        'fail',
        stuck.map((s) => `${s.service} ${s.name}${JSON.stringify(s.labels)}=${s.value}`).join('; '),
        { series: stuck, details },
      );
    },
  };
}
