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
  /** When the process holding an open span stopped under it (its first such stop), if it did. */
  const abandonedAt = (t: Timed): number | undefined => {
    if (t.endMs !== null) return undefined;
    let at: number | undefined;
    for (const w of stopped)
      if (
        (w.injectedAtMs >= t.startMs ||
          (DOWN_UNTIL_HEAL.has(w.fault) && (w.healedAtMs ?? Number.POSITIVE_INFINITY) >= t.startMs)) &&
        servicesOf(w).includes(t.span.service)
      )
        at = Math.min(at ?? Number.POSITIVE_INFINITY, Math.max(t.startMs, w.injectedAtMs));
    return at;
  };
  const abandoned = (t: Timed): boolean => abandonedAt(t) !== undefined;
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
  // The answer came back through the ingress's last request span (a child of a client span;
  // the last to start, since its end may read a moment after the client's across processes):
  // only spans from its start on are on the answer's path. A span that failed before it (an
  // invocation run abandoned on a leader that stepped down, before the client asked for the
  // result) is not where the answer came from.
  const requests = server.filter((t) => clientSpans.has(t.span.parentSpanId));
  const answering = answeredWithError && requests.length > 0 ? latest(requests) : undefined;
  const onPath = (t: Timed): boolean => answering === undefined || t.startMs >= answering.startMs;
  const failed = answeredWithError
    ? server.filter(
        (t) =>
          t.span.status.code === 2 && t.endMs !== null && !clientSpans.has(t.span.parentSpanId) && onPath(t),
      )
    : [];
  const failedLast = lastEnded(failed);
  if (failedLast !== undefined)
    return {
      stop: hop(failedLast),
      ...(lastHop !== undefined ? { lastHop: hop(lastHop) } : {}),
      endedWith: failedLast.span.status.message || 'an error',
      ...(partition !== undefined ? { partition } : {}),
    };
  // Nothing on the path failed: the error is a result a processor replied ("notFound" is an
  // answer, not a failed RPC). The op stopped at the last reply given while the request was open.
  const replied = answering !== undefined ? lastReply(timed, answering) : undefined;
  if (replied !== undefined)
    return {
      stop: hop(replied),
      ...(lastHop !== undefined ? { lastHop: hop(lastHop) } : {}),
      endedWith: `a "${String(replied.span.attributes[A.reply])}" reply`,
      ...(partition !== undefined ? { partition } : {}),
    };
  const stopT =
    pickOpen(open.filter((t) => t.span.service !== clientServiceName)) ??
    // An abandoned span's time ends with its process: after the kill the op waited elsewhere.
    mostSelfTime(server, children, (t) => t.endMs ?? abandonedAt(t) ?? seenUntilMs) ??
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

/** The span that ended last, of those that ended. */
function lastEnded(list: readonly Timed[]): Timed | undefined {
  let best: Timed | undefined;
  for (const t of list) if (t.endMs !== null && (best === undefined || t.endMs > best.endMs!)) best = t;
  return best;
}

/** The last span carrying a processor's reply (limbo.reply) that began after `request` did. */
function lastReply(all: readonly Timed[], request: Timed): Timed | undefined {
  const replies = all.filter(
    (t) => typeof t.span.attributes[A.reply] === 'string' && t.startMs >= request.startMs,
  );
  return replies.length > 0 ? latest(replies) : undefined;
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

/** The span with the most time of its own (children's time taken out), each up to `endOf` it. */
function mostSelfTime(
  list: readonly Timed[],
  children: ReadonlyMap<string, Timed[]>,
  endOf: (t: Timed) => number,
): Timed | undefined {
  let best: Timed | undefined;
  let bestSelf = -1;
  for (const t of list) {
    const end = endOf(t);
    const covered = union(
      (children.get(t.span.spanId) ?? []).map((c) => [
        Math.max(c.startMs, t.startMs),
        Math.min(endOf(c), end),
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
  // Only the client's own span: the system exported none for this op (or has no ingress at all).
  if (t.span.service === clientServiceName)
    return "the system's answer (no span past the client for this op)";
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
