// The spans of a run as the testbed's OTLP receiver normalised them (one record per span,
// whatever the exporter's encoding), the run's spans ended and open (the open-span ledger
// knows the ones a killed process never ended), and the reader of the run directory's spans.jsonl.
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

/** A span's status; the common ones (unset, ok: no message) are one shared frozen object each. */
export function spanStatus(code: number, message: string): SpanRecord['status'] {
  if (message === '' && (code === 0 || code === 1)) return code === 0 ? STATUS_UNSET : STATUS_OK;
  return { code, message };
}
const STATUS_UNSET: SpanRecord['status'] = Object.freeze({ code: 0, message: '' });
const STATUS_OK: SpanRecord['status'] = Object.freeze({ code: 1, message: '' });

/**
 * One span as the run's OTLP receiver got it (attributes as docs/architecture.md#traces names them). Times
 * are epoch ms (the services' clocks), not run ms: `spanRunMs` converts. `endMs` is null for
 * a span that never ended, known from the open-span ledger; `open` says why.
 */
export interface RunSpan extends Omit<SpanRecord, 'endMs'> {
  endMs: number | null;
  open?: OpenSpanMark;
}

/** Why a span never ended: its process was killed or paused, or it was still open at the end. */
export interface OpenSpanMark {
  cause: 'killed' | 'paused' | 'restarted' | 'open';
  /** For people: "never ended — processor-1 was killed at 12.4 s", "still open at heal + 5.0 s". */
  reason: string;
  /** Run ms of the kill, pause or restart that stopped it. */
  atMs?: number;
}

/** A span time (epoch ms) on the run's clock (ms since the run started). */
export function spanRunMs(run: { phases: { startedAtWall: string } }, epochMs: number): number {
  const base = Date.parse(run.phases.startedAtWall);
  return Number.isFinite(base) ? epochMs - base : epochMs;
}

/** spans.jsonl bigger than this is left out of the report (the waterfalls say so). */
export const MAX_SPANS_FILE_BYTES = 256 * 1024 * 1024;

/** The spans of spans.jsonl (ended and, from the ledger, open); lines that are not a span are skipped; missing file → []. */
export function readSpansJsonl(path: string, maxBytes = MAX_SPANS_FILE_BYTES): RunSpan[] {
  if (!existsSync(path) || statSync(path).size > maxBytes) return [];
  const spans: RunSpan[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const s = JSON.parse(line) as Partial<RunSpan>;
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
