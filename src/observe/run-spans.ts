// The run's spans for its data: what the receiver got over OTLP, plus what only the open-span
// ledger knows — spans that started and never ended, each marked with why, read from the
// fault windows: the process was killed (or paused) after the span started, or the span was
// simply still open when the run stopped looking (its deadline).
//
//   OTLP spans ─────────────────────────────┐
//   ledger-only spans ─▶ mark (faults, phases) ┴─▶ RunSpan[] ─▶ run.spans (checkers), spans.jsonl
import type { LedgerSpanRecord, SpanRecord } from './otlp-receiver.js';
import { spanAttributes as A } from '../protocol/names.js';
import {
  finalHealMs,
  runEndMs,
  spanRunMs,
  type OpenSpanMark,
  type RunData,
  type RunSpan,
} from '../run-data/run-data.js';

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Why a span never ended, from the run's fault windows and phases. */
export function openSpanMark(span: Pick<RunSpan, 'service' | 'startMs'>, run: RunData): OpenSpanMark {
  const startRunMs = spanRunMs(run, span.startMs);
  // The window that stopped it: the first kill / pause / restart of its service that was not
  // over yet when the span started (a span can start between the fault's record and the
  // signal landing, so the inject time alone is not the bound; the heal is).
  const stopper = run.faults
    .filter(
      (f) =>
        (f.fault === 'kill' || f.fault === 'pause' || f.fault === 'restart') &&
        f.affects.includes(span.service) &&
        (f.healedAtMs ?? Infinity) >= startRunMs,
    )
    .sort((a, b) => a.injectedAtMs - b.injectedAtMs)[0];
  if (stopper !== undefined) {
    const cause = stopper.fault === 'kill' ? 'killed' : stopper.fault === 'pause' ? 'paused' : 'restarted';
    return {
      cause,
      reason: `never ended — ${span.service} was ${cause} at ${secs(stopper.injectedAtMs)}`,
      atMs: stopper.injectedAtMs,
    };
  }
  const heal = finalHealMs(run);
  const end = runEndMs(run);
  return {
    cause: 'open',
    reason:
      heal !== undefined
        ? `still open at heal + ${secs(end - heal)}`
        : `still open at the end (${secs(end)})`,
  };
}

/** The exported spans and the ledger-only ones (marked when they never ended). */
export function runSpans(
  exported: readonly SpanRecord[],
  unexported: readonly LedgerSpanRecord[],
  run: RunData,
): RunSpan[] {
  const out: RunSpan[] = [...exported];
  for (const s of unexported) {
    if (s.endMs !== null) out.push({ ...s, attributes: { ...s.attributes, [A.spanSource]: 'ledger' } });
    else out.push({ ...s, open: openSpanMark(s, run) });
  }
  return out;
}
