// The fault space a run covered, for any target: one cell per fault kind × what it struck
// (a link by its kind and ends, or a process by its role, leader or not) × the request phase
// the fault met (where the ops in flight at its inject were: the deepest span open in their
// trace, or, without spans, the op kind awaiting its answer). Only faults that met traffic
// count. Runs write it to fault-space.json; `limbo coverage` merges them into a map whose
// empty cells are situations no suite created.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientServiceName } from '../protocol/names.js';
import type { FaultWindow, HistoryOp, RunData, RunSpan } from '../run-data/run-data.js';
import { spanRunMs } from '../run-data/spans.js';

export const faultSpaceFile = 'fault-space.json';

export interface FaultSpaceCell {
  /** The fault's registry name, e.g. `kill`, `latency`. */
  fault: string;
  /** What it struck: `peer link ingress->processor`, `processor (leader)`, `log`. */
  subject: string;
  /** Where the ops it met were: a span name, or `call awaiting its answer`. */
  phase: string;
  /** Fault windows of this kind and subject that met this phase. */
  windows: number;
  /** Ops met in this phase, over those windows. */
  ops: number;
}

export interface FaultSpace {
  target: string;
  /** Fault windows that met traffic, by fault kind and what they struck (whatever the phase). */
  met: { fault: string; subject: string; windows: number }[];
  /** Fault windows that met no op at all, the same way. */
  unmet: { fault: string; subject: string; windows: number }[];
  cells: FaultSpaceCell[];
}

/** A service's role: its name without the instance number (`processor-2` → `processor`). */
export function roleOf(service: string): string {
  return service.replace(/-\d+$/, '');
}

/** What a fault struck, named so that runs of other seeds and topologies name it alike. */
export function subjectOf(w: FaultWindow, linkKinds: Readonly<Record<string, string>> = {}): string {
  if (w.target.includes('->')) {
    const [from = '', to = ''] = w.target.split('->');
    const kind = linkKinds[w.target] ?? (from === 'client' ? 'client' : 'peer');
    return `${kind} link ${roleOf(from)}->${roleOf(to)}`;
  }
  // A fault on several services at once names each role once (`processor-1,processor-2` → `processor`).
  const roles = [...new Set(w.target.split(',').map((t) => roleOf(t.trim())))].join(',');
  return `${roles}${w.leader === true ? ' (leader)' : ''}`;
}

/** A span's name without what varies by workload (a handler's `Service/handler`). */
function phaseName(span: RunSpan): string {
  return span.name
    .split(' ')
    .filter((w) => !w.includes('/'))
    .join(' ');
}

/** The cells of one run. */
export function faultSpaceOf(run: RunData, linkKinds: Readonly<Record<string, string>> = {}): FaultSpace {
  const invokes = new Map<number, HistoryOp>();
  const ends = new Map<number, number>();
  for (const op of run.history) {
    if (op.type === 'invoke') invokes.set(op.opId, op);
    else ends.set(op.opId, op.timeMs);
  }
  const byTrace = new Map<string, RunSpan[]>();
  for (const s of run.spans ?? []) {
    const list = byTrace.get(s.traceId);
    if (list === undefined) byTrace.set(s.traceId, [s]);
    else list.push(s);
  }
  const cells = new Map<string, FaultSpaceCell>();
  const met = new Map<string, { fault: string; subject: string; windows: number }>();
  const unmet = new Map<string, { fault: string; subject: string; windows: number }>();
  for (const w of run.faults) {
    const heal = w.healedAtMs ?? Number.POSITIVE_INFINITY;
    const phases = new Map<string, number>();
    let startedDuring = 0;
    for (const [opId, op] of invokes) {
      const end = ends.get(opId) ?? Number.POSITIVE_INFINITY;
      if (op.timeMs <= w.injectedAtMs && end > w.injectedAtMs) {
        const phase = phaseAt(run, op, byTrace, w.injectedAtMs);
        phases.set(phase, (phases.get(phase) ?? 0) + 1);
      } else if (op.timeMs > w.injectedAtMs && op.timeMs < heal) startedDuring++;
    }
    if (phases.size === 0 && startedDuring > 0) phases.set('ops started while it was in', startedDuring);
    const subject = subjectOf(w, linkKinds);
    const into = phases.size > 0 ? met : unmet;
    const metKey = `${w.fault}\u0000${subject}`;
    const m = into.get(metKey);
    if (m === undefined) into.set(metKey, { fault: w.fault, subject, windows: 1 });
    else m.windows++;
    for (const [phase, ops] of phases) {
      const key = cellKey({ fault: w.fault, subject, phase });
      const cell = cells.get(key);
      if (cell === undefined) cells.set(key, { fault: w.fault, subject, phase, windows: 1, ops });
      else {
        cell.windows++;
        cell.ops += ops;
      }
    }
  }
  const sorted = (m: typeof met): { fault: string; subject: string; windows: number }[] =>
    [...m.values()].sort((a, b) => a.fault.localeCompare(b.fault) || a.subject.localeCompare(b.subject));
  return {
    target: run.target,
    met: sorted(met),
    unmet: sorted(unmet),
    cells: [...cells.values()].sort(compareCells),
  };
}

/** One cell's identity across runs: its fault, subject and phase. */
export function cellKey(c: Pick<FaultSpaceCell, 'fault' | 'subject' | 'phase'>): string {
  return `${c.fault}\u0000${c.subject}\u0000${c.phase}`;
}

export function compareCells(a: FaultSpaceCell, b: FaultSpaceCell): number {
  return (
    a.fault.localeCompare(b.fault) || a.subject.localeCompare(b.subject) || a.phase.localeCompare(b.phase)
  );
}

/** Where `op` was at `atMs`: the deepest span of its trace open then, else its kind awaiting an answer. */
function phaseAt(run: RunData, op: HistoryOp, byTrace: Map<string, RunSpan[]>, atMs: number): string {
  const spans = op.traceId !== undefined ? byTrace.get(op.traceId) : undefined;
  if (spans !== undefined) {
    const open = spans.filter((s) => {
      const start = spanRunMs(run, s.startMs);
      return start <= atMs && (s.endMs === null || spanRunMs(run, s.endMs) > atMs);
    });
    const parents = new Set(open.map((s) => s.parentSpanId));
    const leaves = open.filter((s) => !parents.has(s.spanId) && s.service !== clientServiceName);
    if (leaves.length > 0) {
      const deepest = leaves.reduce((a, b) => (b.startMs > a.startMs ? b : a));
      return phaseName(deepest);
    }
  }
  return `${op.kind} awaiting its answer`;
}

/** Writes `<runDir>/fault-space.json`. */
export function writeFaultSpace(runDir: string, space: FaultSpace): void {
  writeFileSync(join(runDir, faultSpaceFile), JSON.stringify(space, null, 1) + '\n');
}

/** Cells of several runs summed (windows and ops add up), with how many runs met each. */
export function mergeFaultSpaces(spaces: readonly FaultSpace[]): (FaultSpaceCell & { runs: number })[] {
  const cells = new Map<string, FaultSpaceCell & { runs: number }>();
  for (const space of spaces)
    for (const c of space.cells) {
      const key = cellKey(c);
      const cell = cells.get(key);
      if (cell === undefined) cells.set(key, { ...c, runs: 1 });
      else {
        cell.windows += c.windows;
        cell.ops += c.ops;
        cell.runs++;
      }
    }
  return [...cells.values()].sort(compareCells);
}

const isLink = (subject: string): boolean => subject.includes(' link ');

/** A process subject's role, without its leadership mark. */
const subjectRole = (subject: string): string => subject.replace(/ \(leader\)$/, '');

/** One subject of the grid: what struck it and what never did. */
export interface FaultSpaceSubject {
  subject: string;
  link: boolean;
  /** Fault kinds that met traffic on it, with the fault windows that did. */
  met: Map<string, number>;
  /** Fault kinds put on it whose windows met no op, with those windows. */
  unmet: Map<string, number>;
  /** Fault kinds these runs met elsewhere and that apply here, never met on it: situations no run created. */
  missing: string[];
}

/** Several runs' fault space as a grid: subjects × the fault kinds used, and the phases of each met cell. */
export interface FaultSpaceGrid {
  runs: number;
  targets: string[];
  /** Every fault kind met on a link, then on a process, each sorted. */
  linkKinds: string[];
  processKinds: string[];
  subjects: FaultSpaceSubject[];
  cells: (FaultSpaceCell & { runs: number })[];
  /** The cells of each fault × subject, keyed `fault × subject`, in cell order. */
  phases: Map<string, (FaultSpaceCell & { runs: number })[]>;
}

/** The key of one fault × subject in a grid's `phases`. */
export const phaseKey = (fault: string, subject: string): string => `${fault} × ${subject}`;

/**
 * Runs' fault spaces as one grid: each subject, the fault kinds that met traffic on it, those put
 * on it that met nothing, and the kinds these runs used elsewhere but never on it — a link fault
 * on a link, a process fault on a process — then the phases each fault × subject met. What
 * `limbo coverage` prints and report.html draws.
 */
export function faultSpaceGrid(spaces: readonly FaultSpace[]): FaultSpaceGrid {
  const cells = mergeFaultSpaces(spaces);
  const targets = [...new Set(spaces.map((s) => s.target))].sort();
  const allMet = spaces.flatMap((s) => s.met);
  const bySubject = new Map<string, Map<string, number>>();
  for (const m of allMet) {
    const faults = bySubject.get(m.subject) ?? new Map<string, number>();
    bySubject.set(m.subject, faults);
    faults.set(m.fault, (faults.get(m.fault) ?? 0) + m.windows);
  }
  const unmetBySubject = new Map<string, Map<string, number>>();
  for (const u of spaces.flatMap((s) => s.unmet ?? [])) {
    if (!bySubject.has(u.subject)) bySubject.set(u.subject, new Map());
    const faults = unmetBySubject.get(u.subject) ?? new Map<string, number>();
    unmetBySubject.set(u.subject, faults);
    faults.set(u.fault, (faults.get(u.fault) ?? 0) + u.windows);
  }
  const kindsOn = (link: boolean): string[] =>
    [...new Set(allMet.filter((m) => isLink(m.subject) === link).map((m) => m.fault))].sort();
  const linkKinds = kindsOn(true);
  const processKinds = kindsOn(false);
  // A process fault may exist for one role only (a fault hook inside the log, a leadership
  // transfer): it counts as missing on a subject when the runs put it on that subject's role
  // (the other leadership side) or on two roles or more (a kill, a pause: any process).
  const rolesOf = new Map<string, Set<string>>();
  for (const m of allMet)
    if (!isLink(m.subject)) {
      const roles = rolesOf.get(m.fault) ?? new Set<string>();
      rolesOf.set(m.fault, roles.add(subjectRole(m.subject)));
    }
  const applies = (kind: string, subject: string): boolean => {
    if (isLink(subject)) return linkKinds.includes(kind);
    const roles = rolesOf.get(kind);
    return roles !== undefined && (roles.size >= 2 || roles.has(subjectRole(subject)));
  };
  const subjects = [...bySubject.keys()].sort().map((subject): FaultSpaceSubject => {
    const met = new Map([...bySubject.get(subject)!].sort(([a], [b]) => a.localeCompare(b)));
    const link = isLink(subject);
    return {
      subject,
      link,
      met,
      unmet: unmetBySubject.get(subject) ?? new Map<string, number>(),
      missing: (link ? linkKinds : processKinds).filter((k) => !met.has(k) && applies(k, subject)),
    };
  });
  const phases = new Map<string, (FaultSpaceCell & { runs: number })[]>();
  for (const c of cells) {
    const key = phaseKey(c.fault, c.subject);
    phases.set(key, [...(phases.get(key) ?? []), c]);
  }
  return { runs: spaces.length, targets, linkKinds, processKinds, subjects, cells, phases };
}

/**
 * The map `limbo coverage` prints: what each subject met (fault kinds, with the fault windows
 * that met traffic on it), the fault kinds these runs used elsewhere but never on it (a link
 * fault on a link, a process fault on a process: situations no run created), and the request
 * phases each fault × subject met.
 */
export function formatFaultSpace(spaces: readonly FaultSpace[]): string {
  const grid = faultSpaceGrid(spaces);
  const lines = [
    `fault space over ${grid.runs} run(s) on ${grid.targets.join(', ') || 'no target'}: ${grid.cells.length} cell(s) met (fault × what it struck × request phase)`,
  ];
  if (grid.subjects.length === 0) return lines.join('\n') + '\n';
  const width = Math.max(...grid.subjects.map((s) => s.subject.length));
  lines.push('', 'met, by what the fault struck (fault windows that met traffic there):');
  for (const s of grid.subjects)
    lines.push(
      `  ${s.subject.padEnd(width)}  ${s.met.size === 0 ? 'nothing (its faults met no op)' : ''}${[...s.met]
        .map(([f, n]) => `${f} ${n}`)
        .join(', ')}`,
    );
  const missing = grid.subjects.filter((s) => s.missing.length > 0);
  lines.push(
    '',
    missing.length === 0
      ? 'not met: none (every fault kind these runs used met every subject it applies to)'
      : 'not met: fault kinds these runs used, never met on this subject (situations no run created):',
  );
  for (const m of missing) lines.push(`  ${m.subject.padEnd(width)}  ${m.missing.join(', ')}`);
  lines.push('', 'request phases met (ops in flight at the inject):');
  for (const [key, list] of grid.phases)
    lines.push(`  ${key}: ${list.map((c) => `${c.phase} (${c.ops})`).join(', ')}`);
  return lines.join('\n') + '\n';
}

/** Reads a fault-space.json, naming the file when it is not one. */
export function readFaultSpace(file: string): FaultSpace {
  let space: FaultSpace;
  try {
    space = JSON.parse(readFileSync(file, 'utf8')) as FaultSpace;
  } catch (err) {
    throw new Error(`${file} is not a fault space: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  if (!Array.isArray(space.cells) || !Array.isArray(space.met))
    throw new Error(`${file} is not a fault space: no cells`);
  return space;
}
