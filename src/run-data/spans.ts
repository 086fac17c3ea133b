// The spans of a run as the testbed's OTLP receiver normalised them (one record per span,
// whatever the exporter's encoding), and the reader of the run directory's spans.jsonl.
import { existsSync, readFileSync, statSync } from 'node:fs';

export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  service: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  status: { code: number; message: string };
}

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
      if (typeof s.traceId === 'string' && typeof s.startMs === 'number' && typeof s.endMs === 'number')
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
        });
    } catch {
      // a torn last line (the sink was killed mid-write) is not worth losing the report
    }
  }
  return spans;
}
