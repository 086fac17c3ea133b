// After the heal and convergence, nothing may still be waiting inside the system: the
// ingress's pending client requests and each leader's pending RPCs must be back at 0. A series
// whose last sample predates the heal (its process died and stayed dead) says nothing about
// the end state and is left out; no usable series at all is inconclusive. The end is the
// deadline: samples after it (once the runner has aborted open client requests) are ignored.
import { metricNames } from '../protocol/names.js';
import { finalHealMs, type RunData, type SeriesSample } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import type { EvidenceMoment } from '../run-data/verdict.js';
import { groupSeries, scrapedInstead, seriesKey } from './series-math.js';

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
      let lastStale = 0;
      const groups = groupSeries(run.series, names);
      for (const [key, g] of groups) {
        const upTo = g.filter((x) => x.tMs <= deadline);
        const s = upTo[upTo.length - 1];
        if (s === undefined) continue;
        if (s.tMs < heal) {
          stale.push(key);
          lastStale = Math.max(lastStale, s.tMs);
        } else last.push(s);
      }
      if (last.length === 0)
        return result(
          name,
          'inconclusive',
          `no samples of ${names.join(', ')} after the final heal at ${Math.round(heal)} ms (${
            stale.length > 0
              ? `${stale.length} series stopped before it, the last sample at ${Math.round(lastStale)} ms`
              : scrapedInstead(run.series, names)
          })`,
          { details: { staleSeries: stale } },
        );
      const stuck = last.filter((s) => s.value !== 0);
      const details = { seriesChecked: last.length, staleSeries: stale };
      if (stuck.length === 0)
        return result(name, 'pass', `${last.length} pending gauges back at 0`, { details });
      return result(
        name,
        'fail',
        stuck.map((s) => `${s.service} ${s.name}${JSON.stringify(s.labels)}=${s.value}`).join('; '),
        {
          series: stuck,
          details,
          moments: stuck.map((s) => stuckSince(groups.get(seriesKey(s)) ?? [s], s, deadline)),
        },
      );
    },
  };
}

/**
 * When a gauge that ended above 0 reached the level it kept: from its last sample below its
 * final value (the run's start when it never was) to the next sample. Under load the gauge also
 * counts live requests, so it is rarely at 0; the level it ended at is what leaked or stayed
 * stuck, and the moment it was last below that is when the last of it got stuck — what the
 * diagnosis reads the faults at.
 */
function stuckSince(g: readonly SeriesSample[], last: SeriesSample, deadline: number): EvidenceMoment {
  const upTo = g.filter((x) => x.tMs <= deadline);
  let i = upTo.length - 1;
  while (i >= 0 && upTo[i]!.value >= last.value) i--;
  const reached = upTo[i + 1] ?? last;
  const partition = Number(last.labels['partition']);
  return {
    fromMs: i >= 0 ? upTo[i]!.tMs : 0,
    toMs: reached.tMs,
    what: `${last.name} reached ${last.value} and never drained`,
    service: last.service,
    ...(last.labels['partition'] !== undefined && Number.isInteger(partition) ? { partition } : {}),
  };
}
