// Writes a finished run to its directory: the run data files (verdict.json, history.jsonl,
// series.json, faults.json), junit.xml and report.html. Pure data in, files out; checkers
// have already run.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runFiles, writeRunFiles } from '../run-data/files.js';
import type { RunData } from '../run-data/run-data.js';
import type { VerdictFile } from '../run-data/verdict.js';
import { toJUnitXml } from './junit.js';
import { writeReportHtml, type ReportHtmlOptions } from './write-report-html.js';

export function writeReport(
  runDir: string,
  run: RunData,
  verdict: VerdictFile,
  html: ReportHtmlOptions = {},
): void {
  writeRunFiles(runDir, run, verdict);
  writeFileSync(
    join(runDir, runFiles.junit),
    toJUnitXml([
      {
        name: run.suite,
        target: run.target,
        seed: run.seed,
        durationMs: verdict.durationMs,
        timestamp: run.phases.startedAtWall,
        checks: verdict.checks,
        ...(verdict.diagnosis !== undefined ? { diagnosis: verdict.diagnosis } : {}),
      },
    ]),
  );
  writeReportHtml(runDir, run, verdict, html);
}

export { writeReportHtml, type ReportHtmlOptions } from './write-report-html.js';
export { buildVerdict, summarizeOps, type VerdictFile } from '../run-data/verdict.js';
