// Verdicts: what a check concludes about a run (with its evidence), how verdicts combine
// (Jepsen's order: fail beats inconclusive beats pass), and verdict.json, the file a run
// leaves for CI and for people.
import type { RunData, SeriesSample } from './run-data.js';

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

/** The verdict of a run's checks; skipped checks count for nothing. */
export function verdictOf(checks: readonly CheckResult[]): Verdict {
  return combineVerdicts(checks.filter((c) => c.skipped === undefined).map((c) => c.verdict));
}

const rank: Record<Verdict, number> = { pass: 0, inconclusive: 1, fail: 2 };

/** fail > inconclusive > pass; no verdicts at all is inconclusive (nothing was checked). */
export function combineVerdicts(verdicts: readonly Verdict[]): Verdict {
  if (verdicts.length === 0) return 'inconclusive';
  return verdicts.reduce((a, b) => (rank[b] > rank[a] ? b : a), 'pass' as Verdict);
}

export interface VerdictFile {
  suite: string;
  target: string;
  seed: number;
  verdict: Verdict;
  startedAt: string;
  durationMs: number;
  ops: { total: number; ok: number; fail: number; info: number; open: number };
  faults: number;
  checks: CheckResult[];
  /** The command that replays this run (same suite, target and seed). */
  replay: string;
  /** Problems of the run itself (a heal that failed, a fault that could not be injected). */
  runErrors: string[];
  /** The run's Prometheus (its URL while the run lasted, its TSDB kept in the run directory). */
  prometheus?: { url: string; dataDir: string };
}

export function summarizeOps(run: RunData): VerdictFile['ops'] {
  const ops = { total: 0, ok: 0, fail: 0, info: 0, open: 0 };
  for (const op of run.history) {
    if (op.type === 'invoke') ops.total++;
    else ops[op.type]++;
  }
  ops.open = ops.total - ops.ok - ops.fail - ops.info;
  return ops;
}

export function buildVerdict(
  run: RunData,
  checks: CheckResult[],
  meta: { durationMs: number; replay: string; runErrors?: string[] },
): VerdictFile {
  return {
    suite: run.suite,
    target: run.target,
    seed: run.seed,
    verdict: verdictOf(checks),
    startedAt: run.phases.startedAtWall,
    durationMs: meta.durationMs,
    ops: summarizeOps(run),
    faults: run.faults.length,
    checks,
    replay: meta.replay,
    runErrors: meta.runErrors ?? [],
    ...(run.prometheus?.url !== undefined && run.prometheus.dataDir !== undefined
      ? { prometheus: { url: run.prometheus.url, dataDir: run.prometheus.dataDir } }
      : {}),
  };
}
