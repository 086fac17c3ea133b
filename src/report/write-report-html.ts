// Writes report.html into a run directory, next to verdict.json, with the run's spans (those
// the run holds, or read from its spans.jsonl when it does not hold them all), its fault space
// (fault-space.json, else worked out from the run) and its code coverage (coverage.json, when
// the run was made with --coverage). A report that cannot be rendered must not cost the run its
// other files: the error goes into a minimal report.html and is returned.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { faultSpaceFile, faultSpaceOf, readFaultSpace, type FaultSpace } from '../coverage/fault-space.js';
import { mergeCoverage } from '../coverage/map.js';
import { runFiles } from '../run-data/files.js';
import type { RunData } from '../run-data/run-data.js';
import { readSpansJsonl, type RunSpan } from '../run-data/spans.js';
import { codeCoverageOf, type CodeCoverage } from './html-coverage.js';
import { escapeHtml } from './html-escape.js';
import { renderReportHtml } from './html.js';
import type { VerdictFile } from '../run-data/verdict.js';

export interface ReportHtmlOptions {
  /**
   * Why the run has no coverage.json though it was asked for one (plain text, shown in the Code
   * coverage panel): its processes are still to be merged, or none of them was limbo's.
   */
  coverageMissing?: string;
}

/**
 * The run's spans as spans.jsonl has them: the run's own when it holds every one (the span
 * sink brings them up to the file at its stop), else read back from the file.
 */
function reportSpans(runDir: string, run: RunData): readonly RunSpan[] {
  if (run.spans !== undefined && (run.spansDropped ?? 0) === 0) return run.spans;
  return readSpansJsonl(join(runDir, 'spans.jsonl'));
}

/** The runner's fault-space.json (it knows the target's link kinds), else the run's own cells. */
function reportFaultSpace(runDir: string, run: RunData): FaultSpace {
  const file = join(runDir, faultSpaceFile);
  return existsSync(file) ? readFaultSpace(file) : faultSpaceOf(run);
}

/** The run's coverage.json as the panel shows it; a file that cannot be read says so in the panel. */
function reportCoverage(runDir: string): { coverage?: CodeCoverage; missing?: string } {
  const file = join(runDir, runFiles.coverage);
  if (!existsSync(file)) return {};
  try {
    return { coverage: codeCoverageOf(mergeCoverage([file])) };
  } catch (err) {
    return {
      missing: `This run's coverage.json could not be read: ${err instanceof Error ? err.message : String(err)}.`,
    };
  }
}

/** Writes <runDir>/report.html; returns the rendering error, if any (a fallback page is written). */
export function writeReportHtml(
  runDir: string,
  run: RunData,
  verdict: VerdictFile,
  options: ReportHtmlOptions = {},
): Error | undefined {
  const path = join(runDir, runFiles.report);
  try {
    const code = reportCoverage(runDir);
    const missing = code.missing ?? options.coverageMissing;
    const html = renderReportHtml({
      run,
      verdicts: verdict.checks,
      spans: reportSpans(runDir, run),
      replayCommand: verdict.replay,
      runErrors: verdict.runErrors,
      durationMs: verdict.durationMs,
      ...(verdict.diagnosis !== undefined ? { diagnosis: verdict.diagnosis } : {}),
      faultSpace: reportFaultSpace(runDir, run),
      ...(code.coverage !== undefined ? { coverage: code.coverage } : {}),
      ...(missing !== undefined ? { coverageMissing: missing } : {}),
    });
    writeFileSync(path, html);
    return undefined;
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    writeFileSync(
      path,
      `<!DOCTYPE html><meta charset="utf-8"><title>limbo report failed</title><h1>The report could not be rendered</h1><pre>${escapeHtml(error.stack ?? error.message)}</pre><p>verdict.json, junit.xml and the raw data are next to this file.</p>\n`,
    );
    return error;
  }
}
