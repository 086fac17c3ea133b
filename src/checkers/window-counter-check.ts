// Shared shape of "this counter must have moved around each relevant fault window":
// resendsObserved and leadershipChanged. A window counts from its injection to `graceMs`
// after its heal (the system reacts after a heal too, e.g. a restart announces a leader).
import { runEndMs, type FaultWindow, type RunData } from '../run-data/run-data.js';
import { faultsOfRun, notApplicable, result, type Checker, type CheckResult } from './checker.js';
import { groupSeries, restartsOf, scrapedInstead, totalIncrease } from './series-math.js';

export interface WindowCounterSpec {
  name: string;
  metrics: string[];
  relevant: (w: FaultWindow) => boolean;
  /** What a relevant window is, for messages, e.g. "fault that hurt an ingress link". */
  what: string;
  graceMs: number;
}

export function windowCounterChecker(spec: WindowCounterSpec): Checker {
  return {
    name: spec.name,
    needs: spec.metrics,
    check(run: RunData): CheckResult {
      const windows = run.faults.filter(spec.relevant);
      if (windows.length === 0)
        return notApplicable(spec.name, `no ${spec.what} (${faultsOfRun(run)})`, {
          faults: run.faults.map((w) => `${w.fault}@${w.target}`),
        });
      const end = runEndMs(run);
      const missed: FaultWindow[] = [];
      const unseen: FaultWindow[] = [];
      const evidence = [];
      const perWindow = [];
      // Grouped once: the series may hold millions of samples, windows are many.
      const grouped = groupSeries(run.series, spec.metrics);
      const restarts = restartsOf(run.series);
      for (const w of windows) {
        const to = Math.min(end, (w.healedAtMs ?? end) + spec.graceMs);
        const inc = totalIncrease(grouped, w.injectedAtMs, to, restarts);
        perWindow.push({
          fault: w.fault,
          target: w.target,
          fromMs: w.injectedAtMs,
          toMs: to,
          increase: inc.increase,
        });
        if (inc.seriesSeen === 0) unseen.push(w);
        else if (inc.increase <= 0) missed.push(w);
        evidence.push(...inc.evidence);
      }
      const details = { metrics: spec.metrics, windows: perWindow };
      const label = (ws: FaultWindow[]): string => ws.map((w) => `${w.fault}@${w.target}`).join(', ');
      if (missed.length > 0)
        return result(spec.name, 'fail', `${spec.metrics.join(' / ')} did not move for ${label(missed)}`, {
          details,
          series: evidence.slice(0, 100),
          moments: missed.map((w) => {
            // The one service the fault struck (a link's name has an arrow), when it struck one.
            const services = [...new Set(w.affects.filter((a) => !a.includes('->')))];
            return {
              fromMs: w.injectedAtMs,
              toMs: Math.min(end, (w.healedAtMs ?? end) + spec.graceMs),
              what: `${spec.metrics.join(' / ')} did not move`,
              ...(services.length === 1 ? { service: services[0]! } : {}),
            };
          }),
        });
      if (unseen.length > 0)
        return result(
          spec.name,
          'inconclusive',
          `no samples of ${spec.metrics.join(' / ')} around ${label(unseen)} (${scrapedInstead(run.series, spec.metrics)})`,
          {
            details,
          },
        );
      return result(spec.name, 'pass', `${spec.metrics.join(' / ')} moved in all ${windows.length} windows`, {
        details,
        series: evidence.slice(0, 100),
      });
    },
  };
}
