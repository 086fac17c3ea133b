// Writes report.html into a run directory, next to verdict.json, with the run's spans (those
// the run holds, or read from its spans.jsonl when it does not hold them all). A report that cannot be rendered must not cost
// the run its other files: the error goes into a minimal report.html and is returned.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunData } from '../run-data/run-data.js';
import { readSpansJsonl, type RunSpan } from '../run-data/spans.js';
import { escapeHtml } from './html-escape.js';
import { renderReportHtml } from './html.js';
import type { VerdictFile } from '../run-data/verdict.js';

/**
 * The run's spans as spans.jsonl has them: the run's own when it holds every one (the span
 * sink brings them up to the file at its stop), else read back from the file.
 */
function reportSpans(runDir: string, run: RunData): readonly RunSpan[] {
  if (run.spans !== undefined && (run.spansDropped ?? 0) === 0) return run.spans;
  return readSpansJsonl(join(runDir, 'spans.jsonl'));
}

/** Writes <runDir>/report.html; returns the rendering error, if any (a fallback page is written). */
export function writeReportHtml(runDir: string, run: RunData, verdict: VerdictFile): Error | undefined {
  const path = join(runDir, 'report.html');
  try {
    const html = renderReportHtml({
      run,
      verdicts: verdict.checks,
      spans: reportSpans(runDir, run),
      replayCommand: verdict.replay,
      runErrors: verdict.runErrors,
      durationMs: verdict.durationMs,
      ...(verdict.diagnosis !== undefined ? { diagnosis: verdict.diagnosis } : {}),
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
