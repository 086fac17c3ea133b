// Coverage, not only outcomes: a suite that exists to exercise a rare path (fencing of stale
// proposals, a step-down with requests pending) must show that the path ran — its counter
// moved during the run — else its verdict is inconclusive, as faultsHitTraffic is for faults.
import { runEndMs, type RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { counterIncrease, groupSeries } from './series-math.js';

export interface PathCoveredOptions {
  /** The counter that moves when the path runs, e.g. limbo_processor_stale_proposals_dropped_total. */
  metric: string;
  /** Only series with these labels. */
  labels?: Record<string, string>;
  /** The path, for messages: "stale proposals fenced". */
  what: string;
}

export function pathCovered(options: PathCoveredOptions): Checker {
  const name = 'pathCovered';
  return {
    name,
    needs: [options.metric],
    check(run: RunData): CheckResult {
      const end = runEndMs(run);
      let seen = 0;
      let increase = 0;
      for (const g of groupSeries(run.series, [options.metric]).values()) {
        const labels = g[0]?.labels ?? {};
        if (Object.entries(options.labels ?? {}).some(([k, v]) => labels[k] !== v)) continue;
        const inc = counterIncrease(g, -1, end);
        if (inc === undefined) continue;
        seen++;
        increase += inc;
      }
      const details = {
        metric: options.metric,
        labels: options.labels ?? {},
        what: options.what,
        increase,
        series: seen,
      };
      if (increase > 0)
        return result(name, 'pass', `${options.what}: ${options.metric} rose by ${increase}`, { details });
      return result(
        name,
        'inconclusive',
        seen === 0
          ? `${options.what}: no samples of ${options.metric}`
          : `${options.what} never happened: ${options.metric} did not move, so this run proves nothing about that path`,
        { details },
      );
    },
  };
}
