// A checker is a pure function of the run's data: (RunData) → verdict with evidence.
// No I/O, no clock, no randomness, so a verdict can be recomputed from a run directory.
// Verdicts combine as Jepsen's do: fail beats inconclusive beats pass.
import type { RunData, SeriesSample } from '../runner/run-data.js';

export type Verdict = 'pass' | 'fail' | 'inconclusive';

export interface Evidence {
  invocationIds?: string[];
  traceIds?: string[];
  series?: SeriesSample[];
  details: Record<string, unknown>;
}

export interface CheckResult {
  name: string;
  verdict: Verdict;
  summary: string;
  evidence: Evidence;
}

export interface Checker {
  readonly name: string;
  check(run: RunData): CheckResult;
}

const rank: Record<Verdict, number> = { pass: 0, inconclusive: 1, fail: 2 };

/** fail > inconclusive > pass; no verdicts at all is inconclusive (nothing was checked). */
export function combineVerdicts(verdicts: readonly Verdict[]): Verdict {
  if (verdicts.length === 0) return 'inconclusive';
  return verdicts.reduce((a, b) => (rank[b] > rank[a] ? b : a), 'pass' as Verdict);
}

/** Runs every checker; a checker that throws is a fail of that check, never of the run. */
export function runCheckers(checkers: readonly Checker[], run: RunData): CheckResult[] {
  return checkers.map((c) => {
    try {
      return c.check(run);
    } catch (err) {
      return {
        name: c.name,
        verdict: 'fail',
        summary: `checker threw: ${err instanceof Error ? err.message : String(err)}`,
        evidence: { details: { error: String(err) } },
      };
    }
  });
}

export function result(
  name: string,
  verdict: Verdict,
  summary: string,
  evidence: Partial<Evidence> = {},
): CheckResult {
  return { name, verdict, summary, evidence: { ...evidence, details: evidence.details ?? {} } };
}
