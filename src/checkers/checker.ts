// A checker is a pure function of the run's data: (RunData) → verdict with evidence.
// No I/O, no clock, no randomness, so a verdict can be recomputed from a run directory.
// Verdicts combine as Jepsen's do: fail beats inconclusive beats pass.
import type { PromqlQuery, RunData } from '../run-data/run-data.js';
import type { CheckResult, Evidence, Verdict } from '../run-data/verdict.js';
import { messageOf } from '../util/errors.js';

export type { CheckResult, Evidence, Verdict } from '../run-data/verdict.js';
export { combineVerdicts, verdictOf } from '../run-data/verdict.js';

export interface Checker {
  readonly name: string;
  /** The canonical signals (metric names) it reads; when a target lacks all of them it is skipped. */
  readonly needs?: readonly string[];
  /**
   * A PromQL query it reads: the run's Prometheus observer evaluates it into
   * run.prometheus.evaluations before the check (the check stays pure).
   */
  readonly promql?: PromqlQuery;
  check(run: RunData): CheckResult;
}

/**
 * Runs the checkers a target can serve; one whose every needed signal the target lacks is
 * reported as skipped (verdict inconclusive, not counted) with the target's reason.
 */
export function runCheckersOn(
  checkers: readonly Checker[],
  run: RunData,
  missingSignals: Readonly<Record<string, string>> = {},
  inapplicable: Readonly<Record<string, string>> = {},
): CheckResult[] {
  return checkers.flatMap((c) => {
    const notHere = inapplicable[c.name];
    if (notHere !== undefined) return [skipped(c.name, run, notHere, { inapplicable: true })];
    const needs = c.needs ?? [];
    if (needs.length > 0 && needs.every((n) => missingSignals[n] !== undefined))
      return [skipped(c.name, run, needs.map((n) => `${n}: ${missingSignals[n]}`).join('; '), { needs })];
    return runCheckers([c], run);
  });
}

/**
 * A check whose premise this run does not meet (failover with no fault on a processor, a fault
 * check on a run without faults): not applicable, reported as skipped with the reason and the
 * run's evidence for it, so it counts for nothing — neither pass nor inconclusive. Only for a
 * premise the suite's schedule decides: a fault that was planned and not injected is the
 * runner's inconclusive scheduleApplied, so leaving the check out never hides it.
 */
export function notApplicable(name: string, why: string, details: Record<string, unknown> = {}): CheckResult {
  return {
    ...result(name, 'inconclusive', `not applicable: ${why}`, {
      details: { ...details, notApplicable: true },
    }),
    skipped: `not applicable: ${why}`,
  };
}

/** The run's faults as `fault@target` (at most `max`), for a not-applicable check's reason. */
export function faultsOfRun(run: RunData, max = 6): string {
  if (run.faults.length === 0) return 'the run injected no fault';
  const labels = [...new Set(run.faults.map((w) => `${w.fault}@${w.target}`))];
  const shown = labels.slice(0, max).join(', ');
  return `the run's faults: ${shown}${labels.length > max ? ` and ${labels.length - max} more` : ''}`;
}

/** A check not run on this target, with the reason: inconclusive, and not counted. */
function skipped(name: string, run: RunData, why: string, details: Record<string, unknown>): CheckResult {
  return { ...result(name, 'inconclusive', `skipped on ${run.target}: ${why}`, { details }), skipped: why };
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
        summary: `checker threw: ${messageOf(err)}`,
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
