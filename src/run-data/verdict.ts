// Verdicts: what a check concludes about a run (with its evidence), how verdicts combine
// (Jepsen's order: fail beats inconclusive beats pass), and verdict.json, the file a run
// leaves for CI and for people.
import type { RunData, SeriesSample } from './run-data.js';

export type Verdict = 'pass' | 'fail' | 'inconclusive';

export interface Evidence {
  invocationIds?: string[];
  traceIds?: string[];
  series?: SeriesSample[];
  /**
   * When (and where) the check saw what it judged, for findings that name no op — a gauge
   * that never drained, a resend storm, a stop that outlived its grace period: the diagnosis
   * reads the faults and leadership of these moments.
   */
  moments?: EvidenceMoment[];
  details: Record<string, unknown>;
}

/** A stretch of the run a check's finding is about, in run ms, with what happened in it. */
export interface EvidenceMoment {
  fromMs: number;
  toMs: number;
  /** What the check saw then, in a few words ("pending requests rose to 3 and stayed"). */
  what: string;
  service?: string;
  partition?: number;
}

export interface CheckResult {
  name: string;
  verdict: Verdict;
  summary: string;
  evidence: Evidence;
  /**
   * Set when the check was not made, with why: its signals are missing on this target, or its
   * premise is not met by the run (`not applicable: …`). Skipped checks count for nothing.
   */
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
  /** Why the bad ops went bad, grouped by where they stopped (absent: no failed check named an op). */
  diagnosis?: Diagnosis;
}

/**
 * Where the bad ops of a run stopped and why (src/diagnose/): every op a failed check named,
 * read against its spans, its partition's leadership and the fault windows, grouped by the
 * hop where it stopped (service, span, partition), largest group first.
 */
export interface Diagnosis {
  /** Ops the failed checks named (and ops still open at the deadline when a check failed). */
  badOps: number;
  /** False when the run had no spans: every hop is unknown and groups are by partition. */
  traced: boolean;
  groups: DiagnosisGroup[];
  /** The first of the diagnosed ops, one by one (bounded). */
  ops: OpDiagnosis[];
  /** Failed checks whose finding names no op, each read at the moments its evidence gives. */
  findings?: CheckFinding[];
}

/**
 * A failed check's finding that names no op (a metric or a process misbehaved), read against
 * the fault windows and the leadership at the moment the check's evidence points at.
 */
export interface CheckFinding {
  check: string;
  what: string;
  fromMs: number;
  toMs: number;
  service?: string;
  partition?: number;
  /** The faults overlapping the moment, else the last one healed before it. */
  faults: DiagnosisFault[];
  /** The partition's leadership over the moment: the moment's partition, else those its service led. */
  leadership: { partition: number; stretches: LeadershipStretch[] }[];
  sentence: string;
}

/** What went wrong with an op, the worst of what the failed checks said of it. */
export type OpProblem =
  | 'left hanging'
  | 'lost reply'
  | 'lost effect'
  | 'not exactly once'
  | 'wrong answer'
  | 'impossible answer'
  | 'error answer'
  | 'slow'
  | 'answered late'
  | 'named';

/** One span of an op's trace, as a diagnosis names it (times in run ms). */
export interface Hop {
  service: string;
  span: string;
  atMs: number;
  /** Its end in run ms; null: still open when the op was last seen. */
  endMs: number | null;
  attributes: Record<string, string | number | boolean>;
}

/** Who led a partition over a stretch of the run (leaders empty: nobody did). */
export interface LeadershipStretch {
  fromMs: number;
  toMs: number;
  leaders: string[];
  epoch?: number;
}

/** A fault window an op (or a group of ops) lived through, or the last one healed before it. */
export interface DiagnosisFault {
  /** `fault@target`, as the checks name it. */
  name: string;
  fromMs: number;
  toMs?: number;
  /** True when it had healed before the op began (no fault overlapped the op). */
  before?: boolean;
}

export interface OpDiagnosis {
  opId?: number;
  kind?: string;
  invocationId?: string;
  traceId?: string;
  problem: OpProblem;
  /** The failed checks that named it. */
  checks: string[];
  invokedAtMs?: number;
  endedAtMs?: number;
  partition?: number;
  /** Where it stopped: the deepest span still open when it was last seen, else where it waited longest. */
  stop?: Hop;
  /** The furthest it got: the span of its trace that started last. */
  lastHop?: Hop;
  waitingFor?: string;
  /** For an op answered with an error: the error of the span it stopped at (e.g. `lost_leadership`). */
  endedWith?: string;
  faults: DiagnosisFault[];
}

export interface DiagnosisGroup {
  /** `service / span / partition` where its ops stopped (`… / problem` when the hop is unknown). */
  key: string;
  /** `unknown` when the run had no spans for these ops. */
  service: string;
  span: string;
  partition?: number;
  count: number;
  problem: OpProblem;
  /** The failed checks that named its ops. */
  checks: string[];
  /** Op kinds and how many of each. */
  kinds: Record<string, number>;
  invocationIds: string[];
  waitingFor?: string;
  /** The error most of its ops' stop spans ended with, when they were answered with an error. */
  endedWith?: string;
  /** The furthest most of its ops got (service and span), with the time range they got there. */
  lastHop?: { service: string; span: string; fromMs: number; toMs: number; count: number };
  faults: DiagnosisFault[];
  /** Its partition's leaders from just before its first op to its last. */
  leadership: LeadershipStretch[];
  /** The group in one sentence, for the console, JUnit and the report. */
  sentence: string;
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
  meta: { durationMs: number; replay: string; runErrors?: string[]; diagnosis?: Diagnosis },
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
    ...(meta.diagnosis !== undefined &&
    (meta.diagnosis.groups.length > 0 || (meta.diagnosis.findings?.length ?? 0) > 0)
      ? { diagnosis: meta.diagnosis }
      : {}),
  };
}
