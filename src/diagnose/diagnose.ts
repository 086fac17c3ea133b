// The diagnosis of a failing run: for every op a failed check named (and every op still open at
// the deadline), where it stopped, what it was waiting for, the faults it lived through and its
// partition's leadership meanwhile; ops grouped by where they stopped, largest group first,
// each group said in one sentence (docs/traces-and-report.md#why-a-run-failed).
//
//   failed checks ─ invocation / trace ids ─┐
//   history ─ ops open at the deadline ─────┼─▶ bad ops ─▶ hops (spans) ─┐
//                                           │   leadership (series) ─────┼─▶ groups ─▶ sentences
//                                           │   fault windows ───────────┘
// Pure: run data and check results in, a Diagnosis out; recomputable from a run directory.
// Without spans (a declared target that exports none) every hop is unknown and ops are grouped
// by partition, from the history, the leadership series and the fault windows alone.
import { partitionKeyOfInvocation, partitionOf as partitionOfKey } from '../protocol/ids.js';
import { spanAttributes as A } from '../protocol/names.js';
import {
  invocationIdOf,
  pairOps,
  runEndMs,
  type PairedOp,
  type RunData,
  type RunSpan,
} from '../run-data/run-data.js';
import type {
  CheckFinding,
  CheckResult,
  Diagnosis,
  DiagnosisFault,
  DiagnosisGroup,
  OpDiagnosis,
  OpProblem,
} from '../run-data/verdict.js';
import { opHops } from './hops.js';
import { LeadershipIndex } from './leadership.js';
import { findingSentence, groupSentence } from './sentence.js';

/** Bad ops diagnosed one by one (the rest are counted); ops kept in the file; ids kept per group. */
const MAX_DIAGNOSED = 2000;
const MAX_OPS_KEPT = 200;
const MAX_GROUP_IDS = 50;
/** Leadership is read from this long before a group's first op. */
const LEADERSHIP_LEAD_MS = 1000;

/** The problem each check names, worst first (an op named by several gets the worst). */
const problemOrder: OpProblem[] = [
  'left hanging',
  'lost reply',
  'lost effect',
  'not exactly once',
  'wrong answer',
  'impossible answer',
  'error answer',
  'slow',
  'answered late',
  'named',
];

const problemOfCheck: Record<string, OpProblem> = {
  noClientLeftHanging: 'answered late',
  spansEnd: 'answered late',
  pendingDrains: 'answered late',
  keysFreeAfterHeal: 'answered late',
  noGhostCompletions: 'lost reply',
  acknowledgedEffectsPresent: 'lost effect',
  exactlyOnce: 'not exactly once',
  idempotentRetriesAgree: 'wrong answer',
  noImpossibleErrors: 'impossible answer',
  errorAnswersBounded: 'error answer',
  serviceLevels: 'slow',
  failoverTimeBounded: 'slow',
  latencyRecovers: 'slow',
};

interface Bad {
  pair?: PairedOp;
  invocationId?: string;
  traceId?: string;
  checks: Set<string>;
  problem: OpProblem;
}

/**
 * The diagnosis of `run` given its check results; undefined when no check failed, or none named
 * an op, left one open or gave the moments of what it saw.
 */
export function diagnose(run: RunData, checks: readonly CheckResult[]): Diagnosis | undefined {
  const failed = checks.filter((c) => c.verdict === 'fail' && c.skipped === undefined);
  if (failed.length === 0) return undefined;
  const bad = badOps(run, failed);
  const leadership = new LeadershipIndex(run);
  const findings = checkFindings(run, failed, leadership);
  if (bad.length === 0 && findings.length === 0) return undefined;
  const deadline = runEndMs(run);
  const spans = spanIndex(run.spans ?? []);
  const traced = (run.spans?.length ?? 0) > 0;
  const ops: OpDiagnosis[] = [];
  for (const b of bad.slice(0, MAX_DIAGNOSED)) {
    const invokedAtMs = b.pair?.invoke.timeMs;
    const endedAtMs = b.pair?.end?.timeMs;
    const seenUntil = endedAtMs ?? deadline;
    const own = traced ? spansOf(spans, b.traceId, b.invocationId) : [];
    const end = b.pair?.end;
    // A client that timed out got no answer: it was left hanging, not answered with an error.
    const answeredWithError =
      end !== undefined &&
      !noAnswer(end) &&
      (end.type !== 'ok' || (end.response?.status !== undefined && end.response.status >= 400));
    const hops = opHops(run, own, seenUntil, answeredWithError);
    const partition = hops.partition ?? partitionFromId(b.invocationId, leadership.partitions);
    ops.push({
      ...(b.pair !== undefined ? { opId: b.pair.invoke.opId, kind: b.pair.invoke.kind } : {}),
      ...(b.invocationId !== undefined ? { invocationId: b.invocationId } : {}),
      ...(b.traceId !== undefined ? { traceId: b.traceId } : {}),
      problem: b.problem,
      checks: [...b.checks].sort(),
      ...(invokedAtMs !== undefined ? { invokedAtMs } : {}),
      ...(endedAtMs !== undefined ? { endedAtMs } : {}),
      ...(partition !== undefined ? { partition } : {}),
      ...(hops.stop !== undefined ? { stop: hops.stop } : {}),
      ...(hops.lastHop !== undefined ? { lastHop: hops.lastHop } : {}),
      ...(hops.waitingFor !== undefined ? { waitingFor: hops.waitingFor } : {}),
      ...(hops.endedWith !== undefined ? { endedWith: hops.endedWith } : {}),
      // A hung op lives until the deadline; the faults that matter are those up to the last
      // thing its spans show happening to it (all up to the deadline when it has none), and a
      // fault that later struck a service holding its last hop while it still waited (a kill
      // just after a processor appended its End took the reply with it).
      faults: faultsOf(run, invokedAtMs ?? seenUntil, endedAtMs ?? lastSeen(hops) ?? seenUntil, {
        untilMs: endedAtMs ?? seenUntil,
        services: [hops.lastHop?.service, hops.stop?.service].filter((s): s is string => s !== undefined),
      }),
    });
  }
  const groups = groupOps(ops, leadership, deadline, traced);
  return {
    badOps: bad.length,
    traced,
    groups,
    ops: ops.slice(0, MAX_OPS_KEPT),
    ...(findings.length > 0 ? { findings } : {}),
  };
}

/** Findings per failed check that names no op; a check may give several moments, the first few are read. */
const MAX_MOMENTS_PER_CHECK = 3;

/**
 * Each failed check that names no op but says when it saw what it failed on (its evidence's
 * moments): the faults in or just before each moment and the leadership meanwhile, in a sentence.
 */
function checkFindings(
  run: RunData,
  failed: readonly CheckResult[],
  leadership: LeadershipIndex,
): CheckFinding[] {
  const out: CheckFinding[] = [];
  for (const c of failed) {
    if ((c.evidence.invocationIds?.length ?? 0) > 0 || (c.evidence.traceIds?.length ?? 0) > 0) continue;
    for (const m of (c.evidence.moments ?? []).slice(0, MAX_MOMENTS_PER_CHECK)) {
      const partitions =
        m.partition !== undefined
          ? [m.partition]
          : m.service !== undefined
            ? leadership.partitionsLedBy(m.service, m.fromMs, m.toMs)
            : [];
      const finding: CheckFinding = {
        check: c.name,
        what: m.what,
        fromMs: m.fromMs,
        toMs: m.toMs,
        ...(m.service !== undefined ? { service: m.service } : {}),
        ...(m.partition !== undefined ? { partition: m.partition } : {}),
        faults: faultsOf(run, m.fromMs, m.toMs, { untilMs: m.toMs, services: [] }),
        leadership: partitions.map((partition) => ({
          partition,
          stretches: leadership.around(partition, Math.max(0, m.fromMs - LEADERSHIP_LEAD_MS), m.toMs),
        })),
        sentence: '',
      };
      finding.sentence = findingSentence(finding);
      out.push(finding);
    }
  }
  return out;
}

/** The last moment an op's spans show anything happening to it: its last hop's or its stop's start. */
function lastSeen(hops: { stop?: { atMs: number }; lastHop?: { atMs: number } }): number | undefined {
  const times = [hops.stop?.atMs, hops.lastHop?.atMs].filter((t): t is number => t !== undefined);
  return times.length > 0 ? Math.max(...times) : undefined;
}

/** Every op a failed check named, by invocation or trace id, plus every client op open at the deadline. */
function badOps(run: RunData, failed: readonly CheckResult[]): Bad[] {
  const pairs = pairOps(run.history).filter((p) => p.invoke.request?.final !== true);
  const byInvocation = new Map<string, PairedOp[]>();
  const byTrace = new Map<string, PairedOp>();
  for (const p of pairs) {
    const id = invocationIdOf(p);
    if (id !== undefined) {
      const list = byInvocation.get(id);
      if (list === undefined) byInvocation.set(id, [p]);
      else list.push(p);
    }
    const trace = p.end?.traceId ?? p.invoke.traceId;
    if (trace !== undefined) byTrace.set(trace, p);
  }
  const bad = new Map<string, Bad>();
  const mark = (
    key: string,
    make: () => Omit<Bad, 'checks' | 'problem'>,
    check: string,
    problem: OpProblem,
  ): void => {
    let b = bad.get(key);
    if (b === undefined) bad.set(key, (b = { ...make(), checks: new Set(), problem }));
    b.checks.add(check);
    if (problemOrder.indexOf(problem) < problemOrder.indexOf(b.problem)) b.problem = problem;
  };
  const ofPair = (p: PairedOp) => (): Omit<Bad, 'checks' | 'problem'> => {
    const invocationId = invocationIdOf(p);
    const traceId = p.end?.traceId ?? p.invoke.traceId;
    return {
      pair: p,
      ...(invocationId !== undefined ? { invocationId } : {}),
      ...(traceId !== undefined ? { traceId } : {}),
    };
  };
  for (const c of failed) {
    const base = problemOfCheck[c.name] ?? 'named';
    const problemOf = (p: PairedOp | undefined): OpProblem =>
      p !== undefined && (p.end === undefined || p.end.error?.code === 'client_timeout')
        ? 'left hanging'
        : base;
    for (const id of new Set(c.evidence.invocationIds ?? [])) {
      const matched = byInvocation.get(id);
      if (matched === undefined) mark(`inv:${id}`, () => ({ invocationId: id }), c.name, base);
      else for (const p of namedOps(matched)) mark(`op:${p.invoke.opId}`, ofPair(p), c.name, problemOf(p));
    }
    for (const id of new Set(c.evidence.traceIds ?? [])) {
      const p = byTrace.get(id);
      if (p !== undefined) mark(`op:${p.invoke.opId}`, ofPair(p), c.name, problemOf(p));
    }
  }
  // An op nobody answered by the deadline is bad in any failing run, named or not (a hung op
  // the target could not name has no invocation id to be listed by).
  for (const p of pairs)
    if (p.end === undefined) mark(`op:${p.invoke.opId}`, ofPair(p), 'open at the deadline', 'left hanging');
  return [...bad.values()].sort(
    (a, b) =>
      (a.pair?.invoke.timeMs ?? Number.POSITIVE_INFINITY) -
      (b.pair?.invoke.timeMs ?? Number.POSITIVE_INFINITY),
  );
}

/**
 * The ops of one invocation a check is about. A client that gave up on a request and retried
 * it under the same key made several ops of one invocation; the one it gave up on ended by the
 * client's choice (often before the request reached the ingress) and its retry carries the
 * invocation on, so it is what a check naming the invocation means. Only when every op of the
 * invocation was given up on are those the ones named.
 */
function namedOps(matched: readonly PairedOp[]): readonly PairedOp[] {
  const kept = matched.filter((p) => !gaveUp(p));
  return kept.length > 0 ? kept : matched;
}

/** The op ended without an answer from the system: the client timed out or gave up. */
function noAnswer(end: NonNullable<PairedOp['end']>): boolean {
  return end.type === 'info' && (end.error?.code === 'client_timeout' || end.error?.code === 'aborted');
}

/** The client gave up on the op before its answer (info, code `aborted`). */
function gaveUp(p: PairedOp): boolean {
  return p.end?.type === 'info' && p.end.error?.code === 'aborted';
}

interface SpanIndex {
  byTrace: Map<string, RunSpan[]>;
  byInvocation: Map<string, RunSpan[]>;
}

function spanIndex(spans: readonly RunSpan[]): SpanIndex {
  const byTrace = new Map<string, RunSpan[]>();
  const byInvocation = new Map<string, RunSpan[]>();
  const add = (m: Map<string, RunSpan[]>, k: string, s: RunSpan): void => {
    const list = m.get(k);
    if (list === undefined) m.set(k, [s]);
    else list.push(s);
  };
  for (const s of spans) {
    add(byTrace, s.traceId, s);
    const id = s.attributes[A.invocationId];
    if (typeof id === 'string') add(byInvocation, id, s);
  }
  return { byTrace, byInvocation };
}

/** The op's trace and every span naming its invocation (a resumed invocation may run in another trace). */
function spansOf(index: SpanIndex, traceId?: string, invocationId?: string): RunSpan[] {
  const out = new Map<string, RunSpan>();
  for (const s of traceId !== undefined ? (index.byTrace.get(traceId) ?? []) : []) out.set(s.spanId, s);
  for (const s of invocationId !== undefined ? (index.byInvocation.get(invocationId) ?? []) : [])
    out.set(s.spanId, s);
  return [...out.values()];
}

/** The partition an invocation id routes to, given how many partitions the leadership probe reported. */
function partitionFromId(id: string | undefined, partitions: number): number | undefined {
  if (id === undefined || partitions === 0) return undefined;
  const key = partitionKeyOfInvocation(id);
  return key === undefined ? undefined : partitionOfKey(key, partitions);
}

export function faultName(f: { fault: string; target: string }): string {
  return `${f.fault}@${f.target}`;
}

/**
 * The faults whose windows overlap [fromMs, toMs], and those injected later, up to
 * `later.untilMs` (while the op was still open), into one of `later.services`; when none
 * does, the last one healed before it.
 */
function faultsOf(
  run: RunData,
  fromMs: number,
  toMs: number,
  later: { untilMs: number; services: readonly string[] },
): DiagnosisFault[] {
  const out: DiagnosisFault[] = [];
  let before: DiagnosisFault | undefined;
  for (const f of run.faults) {
    const heal = f.healedAtMs ?? Number.POSITIVE_INFINITY;
    const d: DiagnosisFault = {
      name: faultName(f),
      fromMs: f.injectedAtMs,
      ...(f.healedAtMs !== undefined ? { toMs: f.healedAtMs } : {}),
    };
    const struckItLater =
      f.injectedAtMs > toMs &&
      f.injectedAtMs <= later.untilMs &&
      f.affects.some((s) => later.services.includes(s));
    if ((f.injectedAtMs <= toMs && heal >= fromMs) || struckItLater) out.push(d);
    else if (heal < fromMs && (before === undefined || heal > (before.toMs ?? 0)))
      before = { ...d, before: true };
  }
  return out.length > 0 ? out : before !== undefined ? [before] : [];
}

/** The key of the group an op falls in (DiagnosisGroup.key): where it stopped, or, its hop unknown, its partition and problem. */
export function groupKeyOf(op: OpDiagnosis): string {
  // Ops whose hop is unknown are told apart by what went wrong with them instead.
  return (
    `${op.stop?.service ?? 'unknown'} / ${op.stop?.span ?? 'unknown'} / ` +
    (op.partition !== undefined ? `partition ${op.partition}` : 'partition unknown') +
    (op.stop === undefined ? ` / ${op.problem}` : '')
  );
}

function groupOps(
  ops: readonly OpDiagnosis[],
  leadership: LeadershipIndex,
  deadline: number,
  traced: boolean,
): DiagnosisGroup[] {
  const byKey = new Map<string, OpDiagnosis[]>();
  for (const op of ops) {
    const key = groupKeyOf(op);
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [op]);
    else list.push(op);
  }
  const groups: DiagnosisGroup[] = [];
  for (const [key, list] of byKey) {
    const first = list[0]!;
    const from = Math.min(...list.map((o) => o.invokedAtMs ?? deadline));
    const to = Math.max(...list.map((o) => o.endedAtMs ?? deadline));
    const kinds: Record<string, number> = {};
    for (const o of list) if (o.kind !== undefined) kinds[o.kind] = (kinds[o.kind] ?? 0) + 1;
    const group: DiagnosisGroup = {
      key,
      service: first.stop?.service ?? 'unknown',
      span: first.stop?.span ?? 'unknown',
      ...(first.partition !== undefined ? { partition: first.partition } : {}),
      count: list.length,
      problem: mostCommon(list.map((o) => o.problem))!,
      checks: [...new Set(list.flatMap((o) => o.checks))].sort(),
      kinds,
      invocationIds: list
        .flatMap((o) => (o.invocationId !== undefined ? [o.invocationId] : []))
        .slice(0, MAX_GROUP_IDS),
      ...optional(
        'waitingFor',
        mostCommon(list.flatMap((o) => (o.waitingFor !== undefined ? [o.waitingFor] : []))),
      ),
      ...optional(
        'endedWith',
        mostCommon(list.flatMap((o) => (o.endedWith !== undefined ? [o.endedWith] : []))),
      ),
      ...optional('lastHop', lastHopOf(list)),
      faults: groupFaults(list),
      leadership:
        first.partition !== undefined
          ? leadership.around(first.partition, Math.max(0, from - LEADERSHIP_LEAD_MS), to)
          : [],
      sentence: '',
    };
    group.sentence = groupSentence(group, traced);
    groups.push(group);
  }
  const firstAt = (g: DiagnosisGroup): number =>
    Math.min(...(byKey.get(g.key) ?? []).map((o) => o.invokedAtMs ?? Number.POSITIVE_INFINITY));
  return groups.sort((a, b) => b.count - a.count || firstAt(a) - firstAt(b));
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value !== undefined ? { [key]: value } : {}) as { [P in K]?: V };
}

function mostCommon<T>(values: readonly T[]): T | undefined {
  const counts = new Map<T, number>();
  let best: T | undefined;
  for (const v of values) {
    const n = (counts.get(v) ?? 0) + 1;
    counts.set(v, n);
    if (best === undefined || n > counts.get(best)!) best = v;
  }
  return best;
}

/** The hop most of the group's ops got furthest to, and when they got there. */
function lastHopOf(list: readonly OpDiagnosis[]): DiagnosisGroup['lastHop'] {
  const hops = list.flatMap((o) => (o.lastHop !== undefined ? [o.lastHop] : []));
  const key = mostCommon(hops.map((h) => `${h.service}\0${h.span}`));
  if (key === undefined) return undefined;
  const same = hops.filter((h) => `${h.service}\0${h.span}` === key);
  return {
    service: same[0]!.service,
    span: same[0]!.span,
    fromMs: Math.min(...same.map((h) => h.atMs)),
    toMs: Math.max(...same.map((h) => h.atMs)),
    count: same.length,
  };
}

/** The faults the group's ops lived through, the one most of them met first. */
function groupFaults(list: readonly OpDiagnosis[]): DiagnosisFault[] {
  const met = new Map<string, { fault: DiagnosisFault; count: number }>();
  for (const o of list)
    for (const f of o.faults) {
      const key = `${f.name}\0${f.fromMs}`;
      const m = met.get(key);
      if (m === undefined) met.set(key, { fault: f, count: 1 });
      else m.count++;
    }
  return [...met.values()]
    .sort((a, b) => b.count - a.count || a.fault.fromMs - b.fault.fromMs)
    .map((m) => m.fault);
}
