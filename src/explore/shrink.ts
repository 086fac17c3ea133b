// Shrinking a failing schedule (delta debugging, greedy and bounded): drop one fault at a time,
// then halve each fault's duration (repeatedly), keeping a change only when re-runs with the same
// seed still fail: by default one re-run, with `confirm` at least k of m (`--shrink-confirm`,
// stopping as soon as the answer is settled), so a candidate that fails only now and then is not
// what gets saved. Runs are expensive (a whole cluster each), so `maxRuns` bounds the re-runs; a
// candidate starts only when all m of its re-runs fit. What is saved is the smallest schedule
// kept.
import { UsageError } from '../util/errors.js';
import type { PlannedFault } from './plan.js';

/** A candidate is kept when at least `atLeast` of `of` re-runs fail. */
export interface ShrinkConfirm {
  atLeast: number;
  of: number;
}

export const singleRun: ShrinkConfirm = { atLeast: 1, of: 1 };

/** `--shrink-confirm`: `K` (K of K re-runs must fail) or `k/m` (at least k of m). */
export function parseShrinkConfirm(text: string): ShrinkConfirm {
  const m = /^(\d+)(?:\/(\d+))?$/.exec(text.trim());
  const atLeast = m !== null ? Number(m[1]) : NaN;
  const of = m?.[2] !== undefined ? Number(m[2]) : atLeast;
  if (!(atLeast >= 1 && of >= atLeast && of <= 20))
    throw new UsageError(
      `--shrink-confirm must be K (K of K re-runs fail) or k/m (at least k of m), 1 <= k <= m <= 20; got ${text}`,
    );
  return { atLeast, of };
}

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
  confirm: ShrinkConfirm = singleRun,
): Promise<ShrinkResult> {
  let best = [...failing];
  let runs = 0;
  let failedRuns = 0;
  const room = (): boolean => runs + confirm.of <= maxRuns;
  const attempt = async (candidate: PlannedFault[], what: string): Promise<boolean> => {
    let fails = 0;
    let passes = 0;
    // Stop once kept (k failures) or once it no longer can be (more than m - k passes).
    while (fails < confirm.atLeast && passes <= confirm.of - confirm.atLeast) {
      runs++;
      if (await stillFails(candidate)) fails++;
      else passes++;
    }
    failedRuns += fails;
    const kept = fails >= confirm.atLeast;
    const tally = confirm.of > 1 ? ` (failed ${fails} of ${fails + passes})` : '';
    onStep?.(`shrink ${runs}/${maxRuns}: ${what}: ${kept ? 'still fails, kept' : 'passes, undone'}${tally}`);
    if (kept) best = candidate;
    return kept;
  };
  // 1. Drop faults, last first (later faults more often only add noise).
  for (let i = best.length - 1; i >= 0 && best.length > 1 && room(); i--) {
    const candidate = best.filter((_, j) => j !== i);
    await attempt(candidate, `without fault ${i + 1} (${best[i]!.fault})`);
  }
  // 2. Halve durations, each fault as long as it still fails.
  for (let i = 0; i < best.length && room(); i++) {
    for (;;) {
      const f = best[i]!;
      const forMs = Math.max(MIN_FOR_MS, Math.round(f.forMs / 200) * 100);
      if (forMs >= f.forMs || !room()) break;
      const candidate = best.map((p, j) => (j === i ? { ...p, forMs } : p));
      if (!(await attempt(candidate, `fault ${i + 1} (${f.fault}) for ${forMs} ms instead of ${f.forMs}`)))
        break;
    }
  }
  return { planned: best, runs, failedRuns };
}
