// Replay fidelity (`limbo replay`): reruns each seed or suite file N times with the same seed,
// one run at a time, and counts the reruns that gave what the file records. A seed file
// records a failure (verdict fail, the checks in `failed`): a rerun reproduces it when its
// verdict is fail and every one of those checks fails again. A suite file documents a verdict
// per target (documentedVerdict: pass, fail, either or skipped): a rerun reproduces it when
// its verdict is that one. The rate is reproduced / runs.
//
//   file ─▶ expectation ─▶ N × runSuites([file]) ─▶ reproduced? per rerun ─▶ ReplayFileResult
//                                                   └─▶ --record: seed file's replayRates
import {
  documentedVerdict,
  runItselfFailed,
  runSuites,
  wasSkipped,
  type DocumentedVerdict,
  type RunSuitesOptions,
} from '../runner/run-suites.js';
import type { LoadedSuite } from '../runner/load-suites.js';
import type { VerdictFile } from '../run-data/verdict.js';

/** What a rerun must give to count as reproduced. */
export interface ReplayExpectation {
  /** seed: the failure the seed file was saved with; suite: the verdict it documents on the target. */
  kind: 'seed' | 'suite';
  verdict: DocumentedVerdict;
  /** The checks that must fail again (a seed file's `failed`; none for a suite file). */
  failed: string[];
}

export interface ReplayRerun {
  verdict: string;
  /** The checks that failed on this rerun. */
  failed: string[];
  reproduced: boolean;
  runDir?: string;
  /** Why the rerun did not judge anything (the run itself broke), if it did not. */
  runError?: string;
}

export interface ReplayFileResult {
  file: string;
  suite: string;
  target: string;
  seed: number;
  expected: ReplayExpectation;
  runs: number;
  reproduced: number;
  /** reproduced / runs (0 when nothing ran). */
  rate: number;
  reruns: ReplayRerun[];
}

export interface ReplayReport {
  kind: 'limbo-replay';
  target: string;
  runsPerFile: number;
  files: ReplayFileResult[];
}

/** What reruns of `loaded` on `target` must give: a seed file's recorded failure, a suite's documented verdict. */
export function expectationOf(loaded: LoadedSuite, target: string): ReplayExpectation {
  if (loaded.seedFile !== undefined)
    return { kind: 'seed', verdict: 'fail', failed: [...(loaded.seedFile.failed ?? [])] };
  return { kind: 'suite', verdict: documentedVerdict(loaded.suite, target), failed: [] };
}

export const failedChecksOf = (v: VerdictFile): string[] =>
  v.checks.filter((c) => c.verdict === 'fail' && c.skipped === undefined).map((c) => c.name);

/** Whether one rerun's verdict is the one `expected` records (and the recorded checks failed again). */
export function reproduces(v: VerdictFile, expected: ReplayExpectation): boolean {
  if (runItselfFailed(v)) return false;
  if (expected.verdict === 'skipped') return wasSkipped(v);
  if (wasSkipped(v)) return false;
  if (expected.verdict === 'either') return v.verdict === 'pass' || v.verdict === 'fail';
  if (v.verdict !== expected.verdict) return false;
  const failed = failedChecksOf(v);
  return expected.failed.every((c) => failed.includes(c));
}

export function rerunOf(v: VerdictFile, expected: ReplayExpectation, runDir?: string): ReplayRerun {
  return {
    verdict: runItselfFailed(v) ? 'error' : wasSkipped(v) ? 'skipped' : v.verdict,
    failed: failedChecksOf(v),
    reproduced: reproduces(v, expected),
    ...(runDir !== undefined ? { runDir } : {}),
    ...(runItselfFailed(v) ? { runError: v.runErrors.join('; ') } : {}),
  };
}

export function fileResult(
  loaded: LoadedSuite,
  target: string,
  seed: number,
  expected: ReplayExpectation,
  reruns: ReplayRerun[],
): ReplayFileResult {
  const reproduced = reruns.filter((r) => r.reproduced).length;
  return {
    file: loaded.file,
    suite: loaded.suite.name,
    target,
    seed,
    expected,
    runs: reruns.length,
    reproduced,
    rate: reruns.length === 0 ? 0 : reproduced / reruns.length,
    reruns,
  };
}

/** "fail (noClientLeftHanging, pendingDrains)", "pass", "either" — what a file expects. */
export function describeExpectation(e: ReplayExpectation): string {
  return e.failed.length > 0 ? `${e.verdict} (${e.failed.join(', ')})` : e.verdict;
}

/** How the reruns came out, grouped: "fail ×2, pass ×1". */
export function describeOutcomes(reruns: readonly ReplayRerun[]): string {
  const counts = new Map<string, number>();
  for (const r of reruns) counts.set(r.verdict, (counts.get(r.verdict) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v} ×${n}`).join(', ') || '-';
}

/** The per-file table: file, expected, reproduced k/N and rate, what the reruns gave. */
export function replayTable(results: readonly ReplayFileResult[], shown: (file: string) => string): string {
  const rows = results.map((r) => [
    shown(r.file),
    describeExpectation(r.expected),
    `${r.reproduced}/${r.runs}`,
    r.runs === 0 ? '-' : `${Math.round(r.rate * 100)}%`,
    describeOutcomes(r.reruns),
  ]);
  const head = ['file', 'expected', 'reproduced', 'rate', 'reruns'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)) + 2);
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) =>
        i === 2 || i === 3 ? c.padStart(widths[i]! - 2).padEnd(widths[i]!) : c.padEnd(widths[i]!),
      )
      .join('')
      .trimEnd() + '\n';
  return line(head) + rows.map(line).join('');
}

export interface ReplayOptions extends Omit<RunSuitesOptions, 'suites'> {
  files: readonly LoadedSuite[];
  /** Reruns of each file. */
  runs: number;
  /** Before each rerun (i from 0). */
  onRerunStart?(loaded: LoadedSuite, i: number): void;
  /** After each rerun, with the file's reruns so far. */
  onRerun?(loaded: LoadedSuite, i: number, rerun: ReplayRerun): void;
}

/**
 * Reruns each file `runs` times, one run at a time, through runSuites (skips, run errors,
 * Ctrl-C cleanup as in `limbo run`), each with the file's own seed (a seed file's) or `seed`.
 */
export async function replay(o: ReplayOptions): Promise<ReplayReport> {
  const target = o.target.name;
  const files: ReplayFileResult[] = [];
  for (const loaded of o.files) {
    const expected = expectationOf(loaded, target);
    const reruns: ReplayRerun[] = [];
    for (let i = 0; i < o.runs; i++) {
      o.onRerunStart?.(loaded, i);
      let runDir: string | undefined;
      const { verdicts } = await runSuites({
        ...o,
        suites: [loaded],
        hooks: {
          ...o.hooks,
          onVerdict: (res, suite) => {
            runDir = res.runDir;
            o.hooks?.onVerdict?.(res, suite);
          },
        },
      });
      const rerun = rerunOf(verdicts[0]!, expected, runDir);
      reruns.push(rerun);
      o.onRerun?.(loaded, i, rerun);
    }
    files.push(fileResult(loaded, target, loaded.suite.seed ?? o.seed, expected, reruns));
  }
  return { kind: 'limbo-replay', target, runsPerFile: o.runs, files };
}
