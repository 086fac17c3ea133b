// One invocation's trace as an HTML waterfall for report.html: the same span tree as
// `limbo trace` (waterfall.ts), drawn as bars positioned in percent of the trace's extent,
// with the run's fault windows that overlap it shaded behind the bars.
//
//   spans of the invocation's traces ─▶ tree by parent ─▶ rows (offset, duration, bar, details)
import type { SpanRecord } from '../telemetry/otlp-receiver.js';
import { spanAttributes as A } from '../protocol/names.js';
import { escapeHtml as h } from './html-escape.js';
import { spansOfInvocation } from './waterfall.js';

export interface EpochFaultWindow {
  label: string;
  startMs: number;
  /** Undefined when never healed. */
  endMs?: number;
}

export interface HtmlWaterfallOptions {
  maxSpans?: number;
}

/** Spans of the traces mentioning the invocation, or of its trace id when no span names it. */
export function spansForInvocation(
  spans: readonly SpanRecord[],
  invocationId: string | undefined,
  traceId: string | undefined,
): SpanRecord[] {
  const mine = invocationId === undefined ? [] : spansOfInvocation(spans, invocationId);
  if (mine.length > 0 || traceId === undefined || traceId === '') return mine;
  return spans.filter((s) => s.traceId === traceId);
}

export function renderHtmlWaterfall(
  spans: readonly SpanRecord[],
  faults: readonly EpochFaultWindow[],
  options: HtmlWaterfallOptions = {},
): string {
  const maxSpans = options.maxSpans ?? 200;
  if (spans.length === 0) return '<p class="muted">No spans were received for this invocation.</p>';
  const t0 = spans.reduce((m, s) => Math.min(m, s.startMs), Infinity);
  const t1 = spans.reduce((m, s) => Math.max(m, s.endMs), -Infinity);
  const total = Math.max(1, t1 - t0);
  const pct = (ms: number): string => `${Math.min(100, Math.max(0, (ms / total) * 100)).toFixed(3)}%`;

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
  const shades = faults
    .filter((f) => f.startMs <= t1 && (f.endMs ?? Infinity) >= t0)
    .map((f) => {
      const from = Math.max(0, f.startMs - t0);
      const to = Math.min(total, (f.endMs ?? t1) - t0);
      return `<div class="wf-fault" style="left:${pct(from)};width:${pct(to - from)}" title="${h(f.label)}"></div>`;
    })
    .join('');

  const rows: string[] = [];
  const walk = (s: SpanRecord, depth: number): void => {
    if (rows.length >= maxSpans) return;
    const offset = s.startMs - t0;
    const dur = s.endMs - s.startMs;
    const error = s.status.code === 2;
    rows.push(
      `<tr class="span-row${error ? ' span-error' : ''}"><td class="num">${fmtMs(offset)}</td><td class="num">${fmtMs(dur)}</td>` +
        `<td>${h(s.service)}</td><td style="padding-left:${0.4 + depth * 1.1}em">${h(s.name)}</td>` +
        `<td class="wf-track">${shades}<div class="wf-bar" style="left:${pct(offset)};width:max(2px,${pct(dur)})"></div></td>` +
        `<td>${h(spanDetails(s).join(', '))}</td></tr>`,
    );
    for (const c of (children.get(s.spanId) ?? []).sort(byStart)) walk(c, depth + 1);
  };
  for (const r of roots.sort(byStart)) walk(r, 0);
  const more =
    spans.length > rows.length
      ? `<p class="muted">${spans.length - rows.length} more spans not shown.</p>`
      : '';
  return (
    `<table class="waterfall"><thead><tr><th>offset</th><th>duration</th><th>service</th><th>span</th>` +
    `<th class="wf-track-head">${fmtMs(0)} → ${fmtMs(total)}</th><th>details</th></tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table>${more}`
  );
}

function spanDetails(s: SpanRecord): string[] {
  const details: string[] = [];
  const attempt = s.attributes[A.attempt];
  if (attempt !== undefined) details.push(`attempt ${String(attempt)}`);
  const reason = s.attributes[A.resendReason];
  if (reason !== undefined && reason !== '') details.push(`resend: ${String(reason)}`);
  const partition = s.attributes[A.partition];
  if (partition !== undefined) details.push(`partition ${String(partition)}`);
  const epoch = s.attributes[A.leaderEpoch];
  if (epoch !== undefined && epoch !== 0) details.push(`epoch ${String(epoch)}`);
  if (s.status.code === 2) details.push(`ERROR ${s.status.message}`.trim());
  return details;
}

export function fmtMs(ms: number): string {
  if (Math.abs(ms) >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (Math.abs(ms) >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  return `${Math.round(ms)} ms`;
}
