// Writes a finished run to its directory: verdict.json (the verdict, every check with its
// evidence, the replay command), junit.xml, history.jsonl, series.json and faults.json. Pure
// data in, files out; checkers have already run.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { verdictOf, type CheckResult, type Verdict } from '../checkers/checker.js';
import type { RunData } from '../runner/run-data.js';
import { toJUnitXml } from './junit.js';
import { writeReportHtml } from './write-report-html.js';

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

export function writeReport(runDir: string, run: RunData, verdict: VerdictFile): void {
  writeFileSync(join(runDir, 'verdict.json'), JSON.stringify(verdict, null, 2) + '\n');
  writeFileSync(
    join(runDir, 'junit.xml'),
    toJUnitXml([
      {
        name: run.suite,
        target: run.target,
        seed: run.seed,
        durationMs: verdict.durationMs,
        timestamp: run.phases.startedAtWall,
        checks: verdict.checks,
      },
    ]),
  );
  writeFileSync(
    join(runDir, 'history.jsonl'),
    run.history.map((op) => JSON.stringify(op)).join('\n') + (run.history.length ? '\n' : ''),
  );
  writeFileSync(join(runDir, 'series.json'), JSON.stringify(run.series));
  writeFileSync(
    join(runDir, 'faults.json'),
    JSON.stringify({ phases: run.phases, windows: run.faults }, null, 2) + '\n',
  );
  writeReportHtml(runDir, run, verdict);
}
