// A small typed selector over a run's spans (ended and open), aware of the run's faults and
// phases, for trace checks — in the spirit of Tracetest's specs: pick spans by service, name
// and attributes, by relation (child of, in the trace of a client op) and by time relative to
// fault windows and phases, then assert count, duration and status over what was picked.
// Pure data in, so a suite can write a selector as a literal and a seed file can hold one.
//
//   run.spans ─▶ selectSpans(select) ─▶ picked ─▶ expectSpans(expect) ─▶ problems (evidence)
import {
  finalHealMs,
  pairOps,
  runEndMs,
  spanRunMs,
  type OpKind,
  type OpType,
  type RunData,
  type RunSpan,
} from '../run-data/run-data.js';
import { result, type CheckResult } from './checker.js';

/** Matches a string exactly, by a `*` wildcard pattern (`processor-*`), or by one of a list. */
export type TextMatch = string | readonly string[];

/** A stretch of the run: a fault's window, a phase, or from the final heal + Δ to the end. */
export type TimeRef =
  | { fault: string; target?: string }
  | { phase: 'warm-up' | 'chaos' | 'heal' | 'converge' }
  | { afterHealMs: number };

export interface SpanSelector {
  service?: TextMatch;
  name?: TextMatch;
  /** Every listed attribute equal (`limbo.partition: 0`); `true` means present at all. */
  attributes?: Readonly<Record<string, string | number | boolean>>;
  /** Its parent span matches this selector. */
  childOf?: SpanSelector;
  /** In the trace of a client op (of this kind / outcome; `open`: never ended). */
  inTraceOf?: { kind?: OpKind; outcome?: Exclude<OpType, 'invoke'> | 'open' };
  /** Its extent (until the run's end when open) overlaps this stretch. */
  during?: TimeRef;
  /** It started within this stretch. */
  startedDuring?: TimeRef;
  /** Never ended (true) or ended (false). */
  open?: boolean;
}

export interface SpanExpect {
  count?: { min?: number; max?: number; equals?: number };
  /** Every picked span's duration (open spans: until the run's end). */
  durationMs?: { min?: number; max?: number };
  /** Every picked span's status: `ok` is unset or OK, `error` is ERROR. */
  status?: 'ok' | 'error';
  /** Every picked span ended (true) or none did (false). */
  ended?: boolean;
}

const ERROR = 2;

/** A trace check on a run without spans (tracing off): skipped, so it counts for nothing. */
export function notTraced(name: string): CheckResult {
  const why = 'the run has no spans (tracing was off)';
  return { ...result(name, 'inconclusive', `skipped: ${why}`), skipped: why };
}

function textMatches(value: string, m: TextMatch | undefined): boolean {
  if (m === undefined) return true;
  const list = typeof m === 'string' ? [m] : m;
  return list.some((p) =>
    p.includes('*') ? new RegExp(`^${p.split('*').map(escapeRegExp).join('.*')}$`).test(value) : p === value,
  );
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The stretches (run ms) a time reference covers in this run. */
export function stretchesOf(run: RunData, ref: TimeRef): { fromMs: number; toMs: number }[] {
  const end = runEndMs(run);
  if ('fault' in ref)
    return run.faults
      .filter(
        (f) =>
          f.fault === ref.fault &&
          (ref.target === undefined || f.affects.includes(ref.target) || f.target === ref.target),
      )
      .map((f) => ({ fromMs: f.injectedAtMs, toMs: f.healedAtMs ?? end }));
  if ('afterHealMs' in ref) {
    const heal = finalHealMs(run);
    return heal === undefined ? [] : [{ fromMs: heal + ref.afterHealMs, toMs: Infinity }];
  }
  const p = run.phases;
  const bounds: Record<string, [number | undefined, number | undefined]> = {
    'warm-up': [p.warmupStartMs, p.chaosStartMs],
    chaos: [p.chaosStartMs, p.chaosEndMs],
    heal: [p.chaosEndMs, p.healedAtMs],
    converge: [p.healedAtMs, p.deadlineMs],
  };
  const [from, to] = bounds[ref.phase] ?? [undefined, undefined];
  return from === undefined ? [] : [{ fromMs: from, toMs: to ?? end }];
}

/** A span's extent on the run's clock; an open span lasts until the run's end. */
export function spanExtent(run: RunData, s: RunSpan): { startMs: number; endMs: number } {
  const startMs = spanRunMs(run, s.startMs);
  return { startMs, endMs: s.endMs === null ? Math.max(startMs, runEndMs(run)) : spanRunMs(run, s.endMs) };
}

/** The spans of the run a selector picks (none when the run was not traced). */
export function selectSpans(run: RunData, select: SpanSelector): RunSpan[] {
  const spans = run.spans ?? [];
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const traces = select.inTraceOf === undefined ? undefined : opTraces(run, select.inTraceOf);
  const during = select.during === undefined ? undefined : stretchesOf(run, select.during);
  const startedDuring =
    select.startedDuring === undefined ? undefined : stretchesOf(run, select.startedDuring);
  const matches = (s: RunSpan, sel: SpanSelector): boolean => {
    if (!textMatches(s.service, sel.service) || !textMatches(s.name, sel.name)) return false;
    for (const [k, v] of Object.entries(sel.attributes ?? {})) {
      const a = s.attributes[k];
      if (v === true ? a === undefined : a !== v) return false;
    }
    if (sel.open !== undefined && (s.endMs === null) !== sel.open) return false;
    if (sel.childOf !== undefined) {
      const parent = byId.get(s.parentSpanId);
      if (parent === undefined || !matches(parent, sel.childOf)) return false;
    }
    return true;
  };
  return spans.filter((s) => {
    if (!matches(s, select)) return false;
    if (traces !== undefined && !traces.has(s.traceId)) return false;
    if (during !== undefined || startedDuring !== undefined) {
      const x = spanExtent(run, s);
      if (during !== undefined && !during.some((w) => x.startMs <= w.toMs && x.endMs >= w.fromMs))
        return false;
      if (
        startedDuring !== undefined &&
        !startedDuring.some((w) => x.startMs >= w.fromMs && x.startMs <= w.toMs)
      )
        return false;
    }
    return true;
  });
}

/** Trace ids of the client ops of a kind / outcome (final reads left out). */
function opTraces(run: RunData, of: NonNullable<SpanSelector['inTraceOf']>): Set<string> {
  const out = new Set<string>();
  for (const p of pairOps(run.history)) {
    if (p.invoke.request?.final === true) continue;
    if (of.kind !== undefined && p.invoke.kind !== of.kind) continue;
    const outcome = p.end?.type ?? 'open';
    if (of.outcome !== undefined && outcome !== of.outcome) continue;
    const traceId = p.end?.traceId ?? p.invoke.traceId;
    if (traceId !== undefined) out.add(traceId);
  }
  return out;
}

/** What a picked set breaks of an expectation, one sentence each (empty: it holds). */
export function expectSpans(run: RunData, picked: readonly RunSpan[], expect: SpanExpect): string[] {
  const problems: string[] = [];
  const c = expect.count;
  if (c?.equals !== undefined && picked.length !== c.equals)
    problems.push(`${picked.length} spans picked, expected exactly ${c.equals}`);
  if (c?.min !== undefined && picked.length < c.min)
    problems.push(`${picked.length} spans picked, expected at least ${c.min}`);
  if (c?.max !== undefined && picked.length > c.max)
    problems.push(`${picked.length} spans picked, expected at most ${c.max}`);
  for (const s of picked) {
    const x = spanExtent(run, s);
    const dur = x.endMs - x.startMs;
    const label = `${s.service} "${s.name}" (span ${s.spanId}, trace ${s.traceId})`;
    const d = expect.durationMs;
    if (d?.max !== undefined && dur > d.max)
      problems.push(
        `${label} took ${Math.round(dur)} ms${s.endMs === null ? ' and never ended' : ''}, over ${d.max} ms`,
      );
    if (d?.min !== undefined && dur < d.min)
      problems.push(`${label} took ${Math.round(dur)} ms, under ${d.min} ms`);
    if (expect.status === 'ok' && s.status.code === ERROR)
      problems.push(`${label} ended in error: ${s.status.message}`);
    if (expect.status === 'error' && s.status.code !== ERROR) problems.push(`${label} did not end in error`);
    if (expect.ended === true && s.endMs === null)
      problems.push(`${label} ${s.open?.reason ?? 'never ended'}`);
    if (expect.ended === false && s.endMs !== null) problems.push(`${label} ended`);
  }
  return problems;
}
