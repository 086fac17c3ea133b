// One invocation's trace as an HTML waterfall for report.html: the same span tree as
// `limbo trace` (waterfall.ts), drawn as bars positioned in percent of the trace's extent,
// with the run's fault windows that overlap it shaded behind the bars.
//
//   spans of the invocation's traces ─▶ tree by parent ─▶ rows (offset, duration, bar, details)
import type { RunSpan as SpanRecord } from '../run-data/spans.js';
import { escapeHtml as h } from './html-escape.js';
import { spanDetails, spanEndOr, spansOfInvocation, spanTree } from './waterfall.js';

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
  const { t0, t1, total, rows: tree } = spanTree(spans);
  const pct = (ms: number): string => `${Math.min(100, Math.max(0, (ms / total) * 100)).toFixed(3)}%`;
  const shades = faults
    .filter((f) => f.startMs <= t1 && (f.endMs ?? Infinity) >= t0)
    .map((f) => {
      const from = Math.max(0, f.startMs - t0);
      const to = Math.min(total, (f.endMs ?? t1) - t0);
      return `<div class="wf-fault" style="left:${pct(from)};width:${pct(to - from)}" title="${h(f.label)}"></div>`;
    })
    .join('');

  const rows = tree.slice(0, maxSpans).map(({ span: s, depth }) => {
    const offset = s.startMs - t0;
    const dur = spanEndOr(s, t1) - s.startMs;
    const error = s.status.code === 2;
    const open = s.endMs === null;
    return (
      `<tr class="span-row${error ? ' span-error' : ''}${open ? ' span-open' : ''}"${open ? ` title="${h(s.open?.reason ?? 'never ended')}"` : ''}><td class="num">${fmtMs(offset)}</td><td class="num">${open ? 'never ended' : fmtMs(dur)}</td>` +
      `<td>${h(s.service)}</td><td style="padding-left:${0.4 + depth * 1.1}em">${h(s.name)}</td>` +
      `<td class="wf-track">${shades}<div class="wf-bar${open ? ' wf-open' : ''}" style="left:${pct(offset)};width:max(2px,${pct(dur)})"></div></td>` +
      `<td>${h(spanDetails(s).join(', '))}</td></tr>`
    );
  });
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

export function fmtMs(ms: number): string {
  if (Math.abs(ms) >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (Math.abs(ms) >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  return `${Math.round(ms)} ms`;
}
