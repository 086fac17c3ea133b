// Renders one invocation's spans as a terminal waterfall: service, span, start offset,
// duration, attempt and resend reason, errors — with the fault windows that overlap it.
// Spans that never ended (known from the open-span ledger) run to the trace's end, drawn
// light, with why: "never ended — processor-1 was killed at 12.4 s".
//
//   spans.jsonl ─▶ spans of the traces that mention the invocation ─▶ tree by parent ─▶ lines
import type { RunSpan } from '../run-data/spans.js';
import { spanAttributes as A } from '../protocol/names.js';

type SpanRecord = RunSpan;

export interface FaultWindowLike {
  fault: string;
  target: string;
  startMs: number;
  /** Undefined while still active at the end of the run. */
  endMs?: number;
}

export interface Waterfall {
  traceIds: string[];
  lines: string[];
}

/** Every span of every trace that has a span carrying this invocation id. */
export function spansOfInvocation(spans: readonly SpanRecord[], invocationId: string): SpanRecord[] {
  const traces = new Set(
    spans.filter((s) => s.attributes[A.invocationId] === invocationId).map((s) => s.traceId),
  );
  return spans.filter((s) => traces.has(s.traceId));
}

const BAR_WIDTH = 40;

/** The spans of one trace laid out for a waterfall: extent, and rows depth-first by start. */
export interface SpanTree {
  t0: number;
  t1: number;
  total: number;
  rows: { span: SpanRecord; depth: number }[];
}

export function spanTree(spans: readonly SpanRecord[]): SpanTree {
  const t0 = spans.reduce((m, s) => Math.min(m, s.startMs), Infinity);
  const t1 = spans.reduce((m, s) => Math.max(m, s.endMs ?? s.startMs), -Infinity);
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, SpanRecord[]>();
  const roots: SpanRecord[] = [];
  for (const s of spans) {
    if (s.parentSpanId !== '' && ids.has(s.parentSpanId)) {
      const list = children.get(s.parentSpanId) ?? [];
      list.push(s);
      children.set(s.parentSpanId, list);
    } else roots.push(s);
  }
  const byStart = (a: SpanRecord, b: SpanRecord): number => a.startMs - b.startMs;
  const rows: SpanTree['rows'] = [];
  const walk = (span: SpanRecord, depth: number): void => {
    rows.push({ span, depth });
    for (const c of (children.get(span.spanId) ?? []).sort(byStart)) walk(c, depth + 1);
  };
  for (const r of roots.sort(byStart)) walk(r, 0);
  return { t0, t1, total: Math.max(1, t1 - t0), rows };
}

/** Attempt, resend reason, partition, epoch and error of a span, for its waterfall row. */
export function spanDetails(s: SpanRecord): string[] {
  const details: string[] = [];
  const attempt = s.attributes[A.attempt];
  if (attempt !== undefined) details.push(`attempt ${String(attempt)}`);
  const reason = s.attributes[A.resendReason];
  if (reason !== undefined && reason !== '') details.push(`resend: ${String(reason)}`);
  const partition = s.attributes[A.partition];
  if (partition !== undefined) details.push(`partition ${String(partition)}`);
  const epoch = s.attributes[A.leaderEpoch];
  if (epoch !== undefined && epoch !== 0) details.push(`epoch ${String(epoch)}`);
  if (s.open !== undefined) details.push(s.open.reason);
  else if (s.endMs === null) details.push('never ended');
  if (s.attributes[A.spanSource] === 'ledger') details.push('ended, export lost');
  const outcome = s.attributes[A.opOutcome];
  if (outcome !== undefined) details.push(`client ${String(outcome)}`);
  if (s.status.code === 2) details.push(`ERROR ${s.status.message}`.trim());
  return details;
}

export function renderWaterfall(
  invocationId: string,
  spans: readonly SpanRecord[],
  faults: readonly FaultWindowLike[] = [],
): Waterfall {
  const mine = spansOfInvocation(spans, invocationId);
  const traceIds = [...new Set(mine.map((s) => s.traceId))];
  if (mine.length === 0) return { traceIds, lines: [] };
  const { t0, t1, total, rows } = spanTree(mine);
  const open = mine.filter((s) => s.endMs === null).length;
  const lines = [
    `invocation ${invocationId} — trace ${traceIds.join(', ')} — ${mine.length} spans over ${fmtMs(total)}` +
      (open > 0 ? ` — ${open} never ended` : ''),
    `${'offset'.padStart(9)} ${'duration'.padStart(9)}  ${'service'.padEnd(13)} ${'span'.padEnd(44)} ${'timeline'.padEnd(BAR_WIDTH)}  details`,
  ];
  for (const { span: s, depth } of rows) {
    const offset = s.startMs - t0;
    const dur = spanEndOr(s, t1) - s.startMs;
    const from = Math.floor((offset / total) * BAR_WIDTH);
    const width = Math.max(1, Math.round((dur / total) * BAR_WIDTH));
    const bar =
      ' '.repeat(Math.min(from, BAR_WIDTH - 1)) +
      (s.endMs === null ? '░' : s.status.code === 2 ? '!' : '█').repeat(Math.min(width, BAR_WIDTH - from));
    const name = `${'  '.repeat(depth)}${s.name}`;
    const durText = s.endMs === null ? 'open' : fmtMs(dur);
    lines.push(
      `${fmtMs(offset).padStart(9)} ${durText.padStart(9)}  ${s.service.padEnd(13).slice(0, 13)} ${name.padEnd(44).slice(0, 44)} ${bar.padEnd(BAR_WIDTH)}  ${spanDetails(s).join(', ')}`,
    );
  }
  const overlapping = faults.filter((f) => f.startMs <= t1 && (f.endMs ?? Infinity) >= t0);
  if (overlapping.length > 0) {
    lines.push('', 'fault windows overlapping this invocation:');
    for (const f of overlapping) {
      const end = f.endMs === undefined ? 'end of run' : fmtMs(f.endMs - t0);
      lines.push(`  ${fmtMs(f.startMs - t0).padStart(9)} → ${end.padStart(9)}  ${f.fault} on ${f.target}`);
    }
  }
  return { traceIds, lines };
}

/** A span's end, or `openUntil` (the trace's end) for one that never ended. */
export function spanEndOr(s: Pick<SpanRecord, 'startMs' | 'endMs'>, openUntil: number): number {
  return s.endMs ?? Math.max(s.startMs, openUntil);
}

function fmtMs(ms: number): string {
  if (Math.abs(ms) >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms)} ms`;
}
