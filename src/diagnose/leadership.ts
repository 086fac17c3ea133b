// Who led a partition over a stretch of the run, from the is-leader and epoch gauges the
// observers scraped (the same timeline partitionLeadership tells): a diagnosis reads the
// stretches around a bad op's life, so "partition 2 had no leader from 0.7 s to 5.1 s" comes
// from the series, on any target that exports the leadership probe.
import { leadershipTimeline } from '../checkers/partition-leadership.js';
import { metricNames } from '../protocol/names.js';
import { runEndMs, type RunData } from '../run-data/run-data.js';
import type { LeadershipStretch } from '../run-data/verdict.js';

/** Every partition's leadership over the whole run; before a partition's first sample nobody is counted as leading. */
export class LeadershipIndex {
  private readonly byPartition = new Map<string, LeadershipStretch[]>();
  /** How many partitions the leadership probe reported (0: the target exports none). */
  readonly partitions: number;

  constructor(run: RunData) {
    const end = runEndMs(run);
    const epochs = epochSamples(run);
    const changes = leadershipTimeline(run, end);
    let firstScrape = Number.POSITIVE_INFINITY;
    for (const s of run.series) firstScrape = Math.min(firstScrape, s.tMs);
    const grouped = new Map<string, { tMs: number; leaders: string[] }[]>();
    for (const c of changes) {
      let list = grouped.get(c.partition);
      if (list === undefined) grouped.set(c.partition, (list = []));
      list.push({ tMs: c.tMs, leaders: c.leaders });
    }
    for (const [p, list] of grouped) {
      const stretches: LeadershipStretch[] = [];
      // Before its first sample no processor reported the partition: when other services were
      // scraped well before, that is a stretch without a leader (the processors were not up);
      // when it came with the run's first scrapes, it is only the time before anyone was scraped.
      if (list[0]!.tMs > firstScrape + UNREPORTED_AFTER_MS)
        stretches.push({ fromMs: 0, toMs: list[0]!.tMs, leaders: [] });
      list.forEach((c, i) => {
        const toMs = list[i + 1]?.tMs ?? end;
        const stretch: LeadershipStretch = { fromMs: c.tMs, toMs, leaders: c.leaders };
        const epoch = c.leaders.length === 1 ? epochAt(epochs, p, c.leaders[0]!, c.tMs, toMs) : undefined;
        if (epoch !== undefined) stretch.epoch = epoch;
        const last = stretches[stretches.length - 1];
        // Two stretches without a leader in a row (the unreported prefix, then an empty sample) are one gap.
        if (last !== undefined && last.leaders.length === 0 && c.leaders.length === 0) last.toMs = toMs;
        else stretches.push(stretch);
      });
      this.byPartition.set(p, stretches);
    }
    this.partitions = grouped.size;
  }

  /** The partitions `node` led at some time in [fromMs, toMs], in partition order. */
  partitionsLedBy(node: string, fromMs: number, toMs: number): number[] {
    const out: number[] = [];
    for (const [p, stretches] of this.byPartition)
      if (stretches.some((s) => s.leaders.includes(node) && s.fromMs <= toMs && s.toMs >= fromMs))
        out.push(Number(p));
    return out.sort((a, b) => a - b);
  }

  /** The partition's stretches that overlap [fromMs, toMs], clipped to it; [] when it was never reported. */
  around(partition: number, fromMs: number, toMs: number): LeadershipStretch[] {
    const all = this.byPartition.get(String(partition)) ?? [];
    return all
      .map((s) => ({ ...s, fromMs: Math.max(s.fromMs, fromMs), toMs: Math.min(s.toMs, toMs) }))
      .filter((s) => s.toMs - s.fromMs >= MIN_STRETCH_MS);
  }
}

/** A stretch shorter than this once clipped to a window says nothing (it only touches the window). */
const MIN_STRETCH_MS = 10;

/** A partition first reported this long after the run's first scrape had nobody leading it before. */
const UNREPORTED_AFTER_MS = 1000;

type EpochSamples = Map<string, { tMs: number; value: number }[]>;

function epochSamples(run: RunData): EpochSamples {
  const out: EpochSamples = new Map();
  for (const s of run.series) {
    if (s.name !== metricNames.processorLeaderEpoch) continue;
    const key = `${s.labels['partition'] ?? ''}\0${s.labels['node'] ?? s.service}`;
    let list = out.get(key);
    if (list === undefined) out.set(key, (list = []));
    list.push({ tMs: s.tMs, value: s.value });
  }
  for (const list of out.values()) list.sort((a, b) => a.tMs - b.tMs);
  return out;
}

/** The epoch a node reported for a partition while it led it: the highest inside the stretch (a restarted node reports 0 until it applies its announce). */
function epochAt(
  epochs: EpochSamples,
  partition: string,
  node: string,
  fromMs: number,
  toMs: number,
): number | undefined {
  const list = epochs.get(`${partition}\0${node}`) ?? [];
  let epoch: number | undefined;
  for (const s of list) {
    if (s.tMs > toMs) break;
    if (s.tMs >= fromMs) epoch = Math.max(epoch ?? 0, s.value);
  }
  return epoch;
}

/** "no leader 0.7–5.1 s, then processor-1 (epoch 2)": the stretches in a few words. */
export function describeLeadership(stretches: readonly LeadershipStretch[]): string {
  const parts = stretches.slice(0, 4).map((s) => {
    const span = `${sec(s.fromMs)}–${sec(s.toMs)} s`;
    if (s.leaders.length === 0) return `no leader ${span}`;
    const who = s.leaders.join(' and ');
    const epoch = s.epoch !== undefined ? `, epoch ${s.epoch}` : '';
    return s.leaders.length > 1 ? `${who} both led ${span}` : `${who} led ${span}${epoch}`;
  });
  if (stretches.length > 4) parts.push(`${stretches.length - 4} more change(s)`);
  return parts.join(', then ');
}

export function sec(ms: number): string {
  return (ms / 1000).toFixed(1);
}
