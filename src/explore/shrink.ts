// Shrinking a failing schedule (delta debugging, greedy and bounded): drop one fault at a time,
// then halve each fault's duration (repeatedly), keeping a change only when a re-run with the same seed
// still fails. Runs are expensive (a whole cluster each), so `maxRuns` bounds the search; what
// is saved is the smallest schedule seen failing.
import type { PlannedFault } from './plan.js';

export interface ShrinkResult {
  planned: PlannedFault[];
  runs: number;
  /** Re-runs that still failed (evidence that the failure reproduces). */
  failedRuns: number;
}

const MIN_FOR_MS = 500;

export async function shrinkSchedule(
  failing: readonly PlannedFault[],
  stillFails: (candidate: PlannedFault[]) => Promise<boolean>,
  maxRuns: number,
  onStep?: (message: string) => void,
): Promise<ShrinkResult> {
  let best = [...failing];
  let runs = 0;
  let failedRuns = 0;
  const attempt = async (candidate: PlannedFault[], what: string): Promise<boolean> => {
    runs++;
    const fails = await stillFails(candidate);
    onStep?.(`shrink ${runs}/${maxRuns}: ${what}: ${fails ? 'still fails, kept' : 'passes, undone'}`);
    if (fails) {
      failedRuns++;
      best = candidate;
    }
    return fails;
  };
  // 1. Drop faults, last first (later faults more often only add noise).
  for (let i = best.length - 1; i >= 0 && best.length > 1 && runs < maxRuns; i--) {
    const candidate = best.filter((_, j) => j !== i);
    await attempt(candidate, `without fault ${i + 1} (${best[i]!.fault})`);
  }
  // 2. Halve durations, each fault as long as it still fails.
  for (let i = 0; i < best.length && runs < maxRuns; i++) {
    for (;;) {
      const f = best[i]!;
      const forMs = Math.max(MIN_FOR_MS, Math.round(f.forMs / 200) * 100);
      if (forMs >= f.forMs || runs >= maxRuns) break;
      const candidate = best.map((p, j) => (j === i ? { ...p, forMs } : p));
      if (!(await attempt(candidate, `fault ${i + 1} (${f.fault}) for ${forMs} ms instead of ${f.forMs}`)))
        break;
    }
  }
  return { planned: best, runs, failedRuns };
}
