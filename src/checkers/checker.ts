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
  /** Set when the check could not be made on this target (its signals are missing): why. */
  skipped?: string;
}

export interface Checker {
  readonly name: string;
  /** The canonical signals (metric names) it reads; when a target lacks all of them it is skipped. */
  readonly needs?: readonly string[];
  check(run: RunData): CheckResult;
}

/** The verdict of a run's checks; skipped checks count for nothing. */
export function verdictOf(checks: readonly CheckResult[]): Verdict {
  return combineVerdicts(checks.filter((c) => c.skipped === undefined).map((c) => c.verdict));
}

/**
 * Runs the checkers a target can serve; one whose every needed signal the target lacks is
 * reported as skipped (verdict inconclusive, not counted) with the target's reason.
 */
export function runCheckersOn(
  checkers: readonly Checker[],
  run: RunData,
  missingSignals: Readonly<Record<string, string>> = {},
): CheckResult[] {
  return checkers.flatMap((c) => {
    const needs = c.needs ?? [];
    if (needs.length > 0 && needs.every((n) => missingSignals[n] !== undefined)) {
      const why = needs.map((n) => `${n}: ${missingSignals[n]}`).join('; ');
      return [
        {
          ...result(c.name, 'inconclusive', `skipped on ${run.target}: ${why}`, { details: { needs } }),
          skipped: why,
        },
      ];
    }
    return runCheckers([c], run);
  });
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
