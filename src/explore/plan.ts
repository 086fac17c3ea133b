// A fault schedule as plain data, so `limbo explore` can draw one at random, shrink it, save it
// under seeds/ and replay it: each planned fault names a registered fault and its parameters
// (the same names suites use), when it starts and how long it lasts.
//
//   random ─▶ generateSchedule ─▶ PlannedFault[] ─▶ toScheduleEntries ─▶ ScheduleEntry[] (runner)
import type { PlannedFault } from '../faults/planned.js';
import { linkNames } from '../targets/reference.js';
import type { TargetShape, Topology } from '../targets/target.js';
import type { Random } from '../util/random.js';

export { describePlanned, toScheduleEntries, type PlannedFault } from '../faults/planned.js';

/** Faults inside a service (fault hooks): drawn only on the reference cluster, which has them. */
const hookKinds = [
  'log-append-errors',
  'slow-fsync',
  'log-write-errors',
  'table-updates',
  'leadership-step-failure',
  'clock-step',
  'data-loss-restart',
] as const;

/** The fault kinds explore draws from; each can be healed and is survivable by a correct cluster. */
export const exploreFaultKinds = [
  'link-down',
  'latency',
  'timeout',
  'reset_peer',
  'kill',
  'pause',
  'restart',
  'transfer-leadership',
  'isolate',
  ...hookKinds,
] as const;
export type ExploreFaultKind = (typeof exploreFaultKinds)[number];

/** Kinds that need the reference cluster's fault hooks: never drawn for a declared target. */
export const hookFaultKinds: ReadonlySet<ExploreFaultKind> = new Set(hookKinds);

export interface GenerateOptions {
  topology: Topology;
  chaosMs: number;
  maxFaults: number;
  kinds: readonly ExploreFaultKind[];
  /** A declared target's links and processors to draw from (default: the reference topology's). */
  shape?: TargetShape;
}

const round100 = (ms: number): number => Math.round(ms / 100) * 100;

/** The links between services (client links are left out: a cut client link is the client's own timeout). */
export function internalLinks(topology: Topology): string[] {
  return linkNames(topology).filter((l) => !l.startsWith('client->'));
}

const upOrDown = (random: Random): 'upstream' | 'downstream' =>
  random.int(2) === 0 ? 'downstream' : 'upstream';

/** One fault of `kind`, drawn: when, how long, on what, how hard. */
export function drawFault(random: Random, kind: ExploreFaultKind, o: GenerateOptions): PlannedFault {
  const atMs = round100(random.between(0, Math.max(0, o.chaosMs - 2000)));
  const forMs = round100(random.between(500, 4000));
  const partition = random.int(o.topology.partitions);
  const named = random.pick(
    o.shape !== undefined
      ? o.shape.links.filter((l) => !l.startsWith('client->'))
      : internalLinks(o.topology),
  );
  // Half the link faults name a link; the other half take one chosen as they go in, among
  // the links that carried traffic since the warm-up (a cut on an idle link tests nothing).
  const link = random.int(2) === 0 ? named : { kind: 'anyLink' as const };
  const processor =
    o.shape !== undefined
      ? random.pick(o.shape.services.filter((s) => s.role === 'processor').map((s) => s.name))
      : `processor-${1 + random.int(o.topology.processors)}`;
  switch (kind) {
    case 'link-down':
      return { atMs, forMs, fault: kind, params: { on: link } };
    case 'latency':
      return {
        atMs,
        forMs,
        fault: kind,
        // Both directions: upstream holds back what the link's client sends (a deposed
        // leader's appends on their way to the log), downstream the answers.
        params: { on: link, latencyMs: round100(random.between(100, 1500)), stream: upOrDown(random) },
      };
    case 'timeout':
      return { atMs, forMs, fault: kind, params: { on: link, timeoutMs: 0, stream: upOrDown(random) } };
    case 'reset_peer':
      return { atMs, forMs, fault: kind, params: { on: link, timeoutMs: 0 } };
    case 'kill':
    case 'pause':
      return { atMs, forMs, fault: kind, params: { on: { kind: 'leaderOf', partition } } };
    case 'restart':
      return { atMs, forMs, fault: kind, params: { on: processor } };
    case 'transfer-leadership':
      return { atMs, forMs, fault: kind, params: { partition } };
    case 'log-append-errors':
      return { atMs, forMs, fault: kind, params: { partitions: [partition] } };
    case 'log-write-errors':
      return {
        atMs,
        forMs,
        fault: kind,
        params: { written: random.pick(['none', 'torn', 'all'] as const), partitions: [partition] },
      };
    case 'slow-fsync':
      return { atMs, forMs, fault: kind, params: { delayMs: round100(random.between(100, 400)) } };
    case 'table-updates':
      return {
        atMs,
        forMs,
        fault: kind,
        params: {
          how: random.pick(['delay', 'drop', 'reorder'] as const),
          delayMs: round100(random.between(200, 2000)),
        },
      };
    case 'leadership-step-failure':
      return {
        atMs,
        forMs,
        fault: kind,
        params: { partition, steps: [random.pick(['claim', 'announce', 'catch-up', 'resume'] as const)] },
      };
    case 'clock-step': {
      // A step either way, of up to two hours (an NTP step, a resumed VM).
      const offsetMs = round100(random.between(1000, 7_200_000)) * (random.int(2) === 0 ? 1 : -1);
      return { atMs, forMs, fault: kind, params: { on: processor, offsetMs } };
    }
    case 'data-loss-restart':
      return { atMs, forMs, fault: kind, params: { on: processor } };
    case 'isolate': {
      // A partition of a leader (or of any processor): whole, or only its inbound or outbound half.
      const on = random.int(2) === 0 ? { kind: 'leaderOf', partition } : processor;
      const direction = random.pick(['both', 'inbound', 'outbound'] as const);
      return { atMs, forMs, fault: kind, params: { on, direction } };
    }
  }
}

/** What a fault occupies: two faults on the same thing must not overlap in time. */
export function occupies(f: PlannedFault): string {
  const on = f.params.on;
  // Both move a partition's leadership: two at once on one partition would race each other.
  if (f.fault === 'transfer-leadership' || f.fault === 'leadership-step-failure')
    return `partition ${String(f.params['partition'])}`;
  if (typeof on === 'string') return on.includes('->') ? `link ${on}` : `service ${on}`;
  // A link chosen at inject time may be any: kept apart from every other such fault.
  if ((on as { kind?: unknown } | undefined)?.kind === 'anyLink') return 'link (any)';
  // leaderOf(p): any process fault may land on any processor; keep process faults apart.
  return 'processes';
}

const overlaps = (a: PlannedFault, b: PlannedFault): boolean =>
  a.atMs < b.atMs + b.forMs && b.atMs < a.atMs + a.forMs;

function occupiesShared(a: PlannedFault, b: PlannedFault): boolean {
  const oa = occupies(a);
  const ob = occupies(b);
  const proc = (o: string): boolean => o === 'processes' || o.startsWith('service ');
  return oa === ob || (proc(oa) && proc(ob));
}

/** True when `f` can join `planned`: it overlaps no fault on the same link or process. */
export function fits(planned: readonly PlannedFault[], f: PlannedFault): boolean {
  return !planned.some((p) => overlaps(p, f) && occupiesShared(p, f));
}

/** Draws 1..maxFaults faults, none overlapping another on the same link or process. Sorted by start. */
export function generateSchedule(random: Random, o: GenerateOptions): PlannedFault[] {
  if (o.kinds.length === 0) throw new Error('explore needs at least one fault kind');
  const count = 1 + random.int(Math.max(1, o.maxFaults));
  const planned: PlannedFault[] = [];
  // Bounded redraws: a draw that collides with an earlier fault is tried again a few times.
  // A declared target has no fault hooks: its draws come from the rest.
  const kinds = o.shape !== undefined ? o.kinds.filter((k) => !hookFaultKinds.has(k)) : o.kinds;
  if (kinds.length === 0) throw new Error('explore needs at least one fault kind this target can take');
  for (let i = 0, tries = 0; i < count && tries < count * 20; tries++) {
    const f = drawFault(random, random.pick(kinds), o);
    if (!fits(planned, f)) continue;
    planned.push(f);
    i++;
  }
  return planned.sort((a, b) => a.atMs - b.atMs);
}
