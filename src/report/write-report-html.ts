// Writes report.html into a run directory, next to verdict.json, reading the run's spans from
// its spans.jsonl when the span sink wrote one. A report that cannot be rendered must not cost
// the run its other files: the error goes into a minimal report.html and is returned.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunData } from '../runner/run-data.js';
import type { RunSpan as SpanRecord } from '../runner/run-data.js';
import { escapeHtml } from './html-escape.js';
import { renderReportHtml } from './html.js';
import type { VerdictFile } from './write-report.js';

/** spans.jsonl bigger than this is left out of the report (the waterfalls say so). */
export const MAX_SPANS_FILE_BYTES = 256 * 1024 * 1024;

/** The spans of spans.jsonl; lines that are not a span are skipped; missing file → []. */
export function readSpansJsonl(path: string, maxBytes = MAX_SPANS_FILE_BYTES): SpanRecord[] {
  if (!existsSync(path) || statSync(path).size > maxBytes) return [];
  const spans: SpanRecord[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const s = JSON.parse(line) as Partial<SpanRecord>;
      if (
        typeof s.traceId === 'string' &&
        typeof s.startMs === 'number' &&
        (typeof s.endMs === 'number' || s.endMs === null)
      )
        spans.push({
          traceId: s.traceId,
          spanId: s.spanId ?? '',
          parentSpanId: s.parentSpanId ?? '',
          name: s.name ?? '',
          service: s.service ?? '',
          kind: s.kind ?? 0,
          startMs: s.startMs,
          endMs: s.endMs,
          attributes: s.attributes ?? {},
          status: s.status ?? { code: 0, message: '' },
          ...(s.open !== undefined ? { open: s.open } : {}),
        });
    } catch {
      // a torn last line (the sink was killed mid-write) is not worth losing the report
    }
  }
  return spans;
}

/** Writes <runDir>/report.html; returns the rendering error, if any (a fallback page is written). */
export function writeReportHtml(runDir: string, run: RunData, verdict: VerdictFile): Error | undefined {
  const path = join(runDir, 'report.html');
  try {
    const html = renderReportHtml({
      run,
      verdicts: verdict.checks,
      spans: readSpansJsonl(join(runDir, 'spans.jsonl')),
      replayCommand: verdict.replay,
      runErrors: verdict.runErrors,
      durationMs: verdict.durationMs,
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
