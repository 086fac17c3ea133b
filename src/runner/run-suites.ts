// Many suites against one target, one after the other, each with its documented verdict:
// what `limbo run`, `limbo explore`'s replays, the soak and tests share. A suite a target
// cannot run is a skipped verdict with the reason; a run that itself breaks is a failed
// verdict with the message; Ctrl-C during a suite cleans that suite up and exits.
//
//   suites ─▶ for each: skip? ─▶ runSuite (own cleanup + signal handlers) ─▶ VerdictFile
//                                └─▶ documentedVerdict(suite, target) ─▶ undocumentedVerdicts
import { createCleanup } from '../runtime/cleanup.js';
import { combineVerdicts, type Verdict, type VerdictFile } from '../run-data/verdict.js';
import { bugsOfTarget } from '../targets/registry.js';
import type { Target } from '../targets/target.js';
import { messageOf, UsageError } from '../util/errors.js';
import type { LoadedSuite } from './load-suites.js';
import { runSuiteOutcome, type Progress, type RunSuiteOptions, type SuiteRunOutcome } from './run-suite.js';
import { skipReasonFor, type Suite } from './suite.js';
import { scheduleRequirements } from '../faults/selectors.js';

export type DocumentedVerdict = 'pass' | 'fail' | 'either' | 'skipped';

/** The check a suite skipped on a target reports (suite.skipOn / onlyOn). */
export const SKIPPED_CHECK = 'targetSupported';

/** A suite the target could not run (skipOn / onlyOn, or a link or hook it lacks): nothing was tested. */
export const wasSkipped = (v: VerdictFile): boolean =>
  v.checks.some((c) => c.name === SKIPPED_CHECK && c.skipped !== undefined);

/**
 * The verdict of a set of runs: of the suites that ran (a suite the target could not run
 * tested nothing, and neither passes nor spoils the rest); inconclusive when none ran.
 */
export function verdictOfRuns(verdicts: readonly VerdictFile[]): Verdict {
  const ran = verdicts.filter((v) => !wasSkipped(v));
  return ran.length === 0 ? 'inconclusive' : combineVerdicts(ran.map((v) => v.verdict));
}

/** The verdicts that differ from what their suite documents for the target (in run order). */
export function undocumentedVerdicts(
  verdicts: readonly VerdictFile[],
  documented: readonly { suite: string; expected: DocumentedVerdict }[],
): VerdictFile[] {
  return verdicts.filter((v, i) => {
    // A run that broke before judging anything (runFailedVerdict) documents nothing, whatever
    // the suite expects: a target that does not start must not pass as "fails, as documented".
    if (runItselfFailed(v)) return true;
    const expected = documented[i]?.expected;
    if (expected === 'skipped') return !wasSkipped(v);
    if (wasSkipped(v)) return true;
    return expected === 'either' ? v.verdict !== 'pass' && v.verdict !== 'fail' : v.verdict !== expected;
  });
}

/** The verdict of a suite not run on a target: inconclusive, one skipped check with the reason. */
export function skippedVerdict(
  suite: string,
  target: string,
  seed: number,
  replay: string,
  reason: string,
): VerdictFile {
  return {
    ...unrunVerdict(suite, target, seed, replay),
    verdict: 'inconclusive',
    checks: [
      {
        name: SKIPPED_CHECK,
        verdict: 'inconclusive',
        summary: `not run on ${target}: ${reason}`,
        evidence: { details: { reason } },
        skipped: reason,
      },
    ],
  };
}

/** A verdict of a suite that did not run: no ops, no faults, no time. */
function unrunVerdict(
  suite: string,
  target: string,
  seed: number,
  replay: string,
): Omit<VerdictFile, 'verdict' | 'checks'> {
  return {
    suite,
    target,
    seed,
    startedAt: new Date().toISOString(),
    durationMs: 0,
    ops: { total: 0, ok: 0, fail: 0, info: 0, open: 0 },
    faults: 0,
    replay,
    runErrors: [],
  };
}

/**
 * Why `suite` is not run on `target`, if it is not: the suite says so (skipOn, onlyOn), or a
 * declared target lacks a service, role or link its schedule names. `limbo run` and `limbo
 * soak` skip by this one answer.
 */
export function suiteSkipReason(suite: Suite, target: Target, targetName: string): string | undefined {
  return (
    skipReasonFor(suite, targetName) ??
    target.unsupported?.(scheduleRequirements(suite.schedule.map((e) => e.fault)))
  );
}

/**
 * The verdict a suite documents for a target: skipped, either (timing-dependent), fail
 * (expectedToFailOn, or a bug target `reference+bug:<x>` with a switch the suite `catches`) or
 * pass. On a bug target a suite that claims none of its switches may still catch one: either.
 */
export function documentedVerdict(suite: Suite, target: string): DocumentedVerdict {
  if (skipReasonFor(suite, target) !== undefined) return 'skipped';
  if (suite.timingDependentOn.includes(target)) return 'either';
  if (suite.expectedToFailOn.includes(target)) return 'fail';
  const bugs = bugsOfTarget(target);
  if (bugs.length === 0) return 'pass';
  return bugs.some((b) => suite.catches.includes(b)) ? 'fail' : 'either';
}

/** Whether `v` is the verdict of a run that broke before it judged anything (runFailedVerdict). */
export function runItselfFailed(v: VerdictFile): boolean {
  return v.checks.length === 0 && v.runErrors.length > 0;
}

/** The verdict of a run that broke before it could judge anything (the message is the run error). */
export function runFailedVerdict(
  suite: string,
  target: string,
  seed: number,
  replay: string,
  message: string,
): VerdictFile {
  return { ...unrunVerdict(suite, target, seed, replay), verdict: 'fail', checks: [], runErrors: [message] };
}

export interface RunSuitesHooks {
  onSuiteStart?(suite: Suite): void;
  onSkipped?(verdict: VerdictFile): void;
  onRunFailed?(verdict: VerdictFile, message: string): void;
  onVerdict?(result: SuiteRunOutcome, suite: Suite): void;
  /** Ctrl-C / SIGTERM during a suite (its cleanup runs, then the process exits 130 / 143). */
  onSignal?(suite: Suite, signal: NodeJS.Signals): void;
  /** A progress sink per suite run. */
  progress?(): {
    onLog: (line: string) => void;
    onProgress: (p: Progress) => void;
    done: () => void;
  };
}

export interface RunSuitesOptions {
  target: Target;
  suites: readonly LoadedSuite[];
  /** The seed of suites that do not pin their own (seed files do). */
  seed: number;
  /** Options every run gets (out root, Toxiproxy URL, Prometheus). */
  runOptions: Omit<RunSuiteOptions, 'target' | 'seed' | 'replay' | 'cleanup' | 'onLog' | 'onProgress'>;
  /** The command that replays one suite's run. */
  replayOf(file: string, suite: Suite & { seed?: number }): string;
  hooks?: RunSuitesHooks;
}

export interface RunSuitesResult {
  verdicts: VerdictFile[];
  documented: { suite: string; expected: DocumentedVerdict }[];
}

export async function runSuites(o: RunSuitesOptions): Promise<RunSuitesResult> {
  const hooks = o.hooks ?? {};
  const verdicts: VerdictFile[] = [];
  const documented: RunSuitesResult['documented'] = [];
  const targetName = o.target.name;
  for (const { file, suite } of o.suites) {
    // A suite names targets (skipOn); a declared target also says which faults it cannot serve.
    const skipReason = suiteSkipReason(suite, o.target, targetName);
    documented.push({
      suite: suite.name,
      expected: skipReason !== undefined ? 'skipped' : documentedVerdict(suite, targetName),
    });
    const suiteSeed = suite.seed ?? o.seed;
    const replay = o.replayOf(file, suite);
    hooks.onSuiteStart?.(suite);
    if (skipReason !== undefined) {
      const skipped = skippedVerdict(suite.name, targetName, o.seed, replay, skipReason);
      verdicts.push(skipped);
      hooks.onSkipped?.(skipped);
      continue;
    }
    const cleanup = createCleanup();
    const uninstall = cleanup.installSignalHandlers((signal) => hooks.onSignal?.(suite, signal));
    const progress = hooks.progress?.();
    try {
      const res = await runSuiteOutcome(suite, {
        ...o.runOptions,
        target: o.target,
        seed: suiteSeed,
        replay,
        cleanup,
        ...(progress !== undefined ? { onLog: progress.onLog, onProgress: progress.onProgress } : {}),
      });
      progress?.done();
      verdicts.push(res.verdict);
      hooks.onVerdict?.(res, suite);
    } catch (err) {
      if (err instanceof UsageError) throw err;
      const failed = runFailedVerdict(suite.name, targetName, suiteSeed, replay, messageOf(err));
      verdicts.push(failed);
      hooks.onRunFailed?.(failed, messageOf(err));
    } finally {
      uninstall();
      await cleanup.runAll();
    }
  }
  return { verdicts, documented };
}
