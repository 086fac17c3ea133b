// Where one op stopped, read from the spans of its trace: the deepest span still open when the
// op was last seen (the deadline for an op that never ended), or, for an op that ended, the
// span where it spent the most time of its own (its duration less its children's). What that
// span was waiting for is said from its name and attributes (docs/architecture.md#traces).
import {
  clientServiceName,
  logServerSpanNames,
  spanAttributes as A,
  spanNamePatterns,
  spanNames,
} from '../protocol/names.js';
import { spanRunMs, type RunData, type RunSpan } from '../run-data/run-data.js';
import type { Hop } from '../run-data/verdict.js';

export interface OpHops {
  stop?: Hop;
  lastHop?: Hop;
  waitingFor?: string;
  /** For an op answered with an error: the error of the span its answer came from. */
  endedWith?: string;
  /** The partition its spans name (limbo.partition). */
  partition?: number;
}

interface Timed {
  span: RunSpan;
  startMs: number;
  /** Run ms; null when it had not ended by `seenUntilMs`. */
  endMs: number | null;
}

/**
 * The hops of one op whose trace holds `spans`, as seen until `seenUntilMs` (run ms). An op
 * answered with an error (`answeredWithError`) stopped at the last span that failed, if any.
 */
export function opHops(
  run: RunData,
  spans: readonly RunSpan[],
  seenUntilMs: number,
  answeredWithError = false,
): OpHops {
  const timed: Timed[] = [];
  for (const span of spans) {
    const startMs = spanRunMs(run, span.startMs);
    if (startMs > seenUntilMs) continue;
    const end = span.endMs === null ? null : spanRunMs(run, span.endMs);
    timed.push({ span, startMs, endMs: end === null || end > seenUntilMs ? null : end });
  }
  if (timed.length === 0) return {};
  const server = timed.filter((t) => t.span.service !== clientServiceName);
  const partition = partitionOf(timed);
  const children = new Map<string, Timed[]>();
  for (const t of timed) {
    const list = children.get(t.span.parentSpanId);
    if (list === undefined) children.set(t.span.parentSpanId, [t]);
    else list.push(t);
  }
  const lastHop = callerOfLogSide(latest(server.length > 0 ? server : timed), timed);
  // A span left open by a process that was killed or restarted after it began never ends: it
  // is not where the op waits (its caller, still alive, is). A killed process may live on for
  // a moment after the kill was sent, and nothing of it runs again before the heal: a span it
  // began before its heal was abandoned too.
  const stopped = run.faults.filter((w) => PROCESS_ENDED.has(w.fault));
  const abandoned = (t: Timed): boolean =>
    t.endMs === null &&
    stopped.some(
      (w) =>
        (w.injectedAtMs >= t.startMs ||
          (DOWN_UNTIL_HEAL.has(w.fault) && (w.healedAtMs ?? Number.POSITIVE_INFINITY) >= t.startMs)) &&
        servicesOf(w).includes(t.span.service),
    );
  const stillOpen = (t: Timed): boolean => t.endMs === null && !abandoned(t);
  // The deepest open span: open, and none of its children is open.
  const open = timed.filter(
    (t) => stillOpen(t) && !(children.get(t.span.spanId) ?? []).some((c) => stillOpen(c)),
  );
  // The spans that failed, less the one that only carried the answer back to the client (the
  // ingress's request span, a child of the client's): the last to end is where the op's path
  // ended (the ingress's attempt that was not resent, rather than the processor behind it).
  const clientSpans = new Set(
    timed.filter((t) => t.span.service === clientServiceName).map((t) => t.span.spanId),
  );
  const failed = answeredWithError
    ? server.filter(
        (t) => t.span.status.code === 2 && t.endMs !== null && !clientSpans.has(t.span.parentSpanId),
      )
    : [];
  const failedLast =
    failed.length > 0 ? failed.reduce((a, b) => ((b.endMs ?? 0) > (a.endMs ?? 0) ? b : a)) : undefined;
  if (failedLast !== undefined)
    return {
      stop: hop(failedLast),
      ...(lastHop !== undefined ? { lastHop: hop(lastHop) } : {}),
      endedWith: failedLast.span.status.message || 'an error',
      ...(partition !== undefined ? { partition } : {}),
    };
  const stopT =
    pickOpen(open.filter((t) => t.span.service !== clientServiceName)) ??
    mostSelfTime(server, children, seenUntilMs) ??
    pickOpen(open) ??
    lastHop;
  const stop = hop(stopT);
  return {
    stop,
    ...(lastHop !== undefined ? { lastHop: hop(lastHop) } : {}),
    waitingFor: waitingFor(stopT, timed, children, partition),
    ...(partition !== undefined ? { partition } : {}),
  };
}

/** Faults that end a process: the spans it had open are abandoned, not waiting. */
const PROCESS_ENDED: ReadonlySet<string> = new Set([
  'kill',
  'restart',
  'data-loss-restart',
  'clients-before-processors',
]);

/** Of those, the faults whose process stays down until the heal (the others start it again at once). */
const DOWN_UNTIL_HEAL: ReadonlySet<string> = new Set(['kill', 'clients-before-processors']);

function servicesOf(w: RunData['faults'][number]): readonly string[] {
  const named = w.details?.['services'];
  return Array.isArray(named) ? (named as string[]) : w.affects;
}

/** The log's side of an append or read stands for the call that made it: the caller is the hop. */
function callerOfLogSide(t: Timed, all: readonly Timed[]): Timed {
  if (!logServerSpanNames.includes(t.span.name) || !/^log(-\d+)?$/.test(t.span.service)) return t;
  return all.find((c) => c.span.spanId === t.span.parentSpanId && c.span.service !== clientServiceName) ?? t;
}

function hop(t: Timed): Hop {
  return {
    service: t.span.service,
    span: t.span.name,
    atMs: round(t.startMs),
    endMs: t.endMs === null ? null : round(t.endMs),
    attributes: t.span.attributes,
  };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function latest(list: readonly Timed[]): Timed {
  return list.reduce((a, b) => (b.startMs > a.startMs ? b : a));
}

function pickOpen(list: readonly Timed[]): Timed | undefined {
  return list.length === 0 ? undefined : latest(list);
}

/** The span with the most time of its own (children's time taken out) up to `untilMs`. */
function mostSelfTime(
  list: readonly Timed[],
  children: ReadonlyMap<string, Timed[]>,
  untilMs: number,
): Timed | undefined {
  let best: Timed | undefined;
  let bestSelf = -1;
  for (const t of list) {
    const end = t.endMs ?? untilMs;
    const covered = union(
      (children.get(t.span.spanId) ?? []).map((c) => [
        Math.max(c.startMs, t.startMs),
        Math.min(c.endMs ?? untilMs, end),
      ]),
    );
    const self = end - t.startMs - covered;
    if (self > bestSelf) [best, bestSelf] = [t, self];
  }
  return best;
}

function union(ranges: [number, number][]): number {
  const sorted = ranges.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  let total = 0;
  let [from, to] = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
  for (const [a, b] of sorted) {
    if (a > to) {
      if (to > from) total += to - from;
      [from, to] = [a, b];
    } else to = Math.max(to, b);
  }
  if (to > from) total += to - from;
  return total;
}

function partitionOf(timed: readonly Timed[]): number | undefined {
  for (const t of timed) {
    const p = t.span.attributes[A.partition];
    if (typeof p === 'number') return p;
    if (typeof p === 'string' && /^\d+$/.test(p)) return Number(p);
  }
  return undefined;
}

const ATTEMPT = spanNamePatterns.ingressAttempt;

/** What the span an op stopped in was waiting for, in words. */
function waitingFor(
  t: Timed,
  all: readonly Timed[],
  children: ReadonlyMap<string, Timed[]>,
  partition: number | undefined,
): string {
  const a = t.span.attributes;
  const p = partition !== undefined ? `partition ${partition}'s` : "its partition's";
  const epoch = typeof a[A.leaderEpoch] === 'number' ? ` at epoch ${a[A.leaderEpoch]}` : '';
  const node = typeof a[A.node] === 'string' ? (a[A.node] as string) : t.span.service;
  const name = t.span.name;
  const attempt = ATTEMPT.exec(name);
  if (attempt !== null) {
    const seen = (children.get(t.span.spanId) ?? []).length > 0;
    return (
      `${p} ${attempt[1]} reply (attempt ${String(a[A.attempt] ?? '?')}${epoch}` +
      (seen ? ')' : ', no processor span for it)')
    );
  }
  if (t.span.service === clientServiceName) return 'the ingress (no ingress span for this op)';
  if (spanNamePatterns.ingressRequest.test(name)) {
    const attempts = all.filter((x) => ATTEMPT.test(x.span.name));
    if (attempts.length === 0)
      return `${p} answer, with no request to a processor in flight (a pushed reply)`;
    const last = latest(attempts);
    const reason = last.span.status.message !== '' ? `: ${last.span.status.message}` : '';
    return `a resend to ${p} leader (last of ${attempts.length} attempt(s) ended${reason})`;
  }
  if (name === spanNames.processorSubmit) return `${p} invocation to be applied on ${node}${epoch}`;
  if (name === spanNames.processorGetOutput) return `${p} invocation to end on ${node}${epoch}`;
  if (spanNamePatterns.invoke.test(name)) return `the handler's End to be appended by ${node}${epoch}`;
  if (name === spanNames.logAppend || spanNamePatterns.processorAppend.test(name))
    return `the log to acknowledge an append${epoch}`;
  return `"${name}" on ${t.span.service} to end`;
}
