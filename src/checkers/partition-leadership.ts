// After the heal, every partition must have exactly one leader: at the deadline, the last
// `limbo_processor_is_leader{partition,…}` sample of every node (taken after the heal) shows
// one 1 per partition — or the partition has been without (or with several) for less than
// `stuckAfterMs`, i.e. it may still be electing: not judged stuck, and the summary says so. Its evidence is the leadership timeline — every change of a partition's
// leader set seen in the series, with its time — so a stuck or doubly led partition reads as a
// story (which node led when, and since when nobody does).
import { metricNames } from '../protocol/names.js';
import { finalHealMs, runEndMs, type RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { scrapedInstead } from './series-math.js';

export interface LeadershipChange {
  tMs: number;
  partition: string;
  leaders: string[];
}

const MAX_TIMELINE = 300;

/** A node's is-leader value stands this many of its scrape intervals after its last sample. */
const STALE_SCRAPES = 3;

/** The usual gap between two samples of one series (the median), 1 s when there are too few to tell. */
function scrapeIntervalMs(samples: readonly RunData['series'][number][]): number {
  const last = new Map<string, number>();
  const gaps: number[] = [];
  for (const s of samples) {
    const key = `${s.labels['partition']}\0${s.labels['node'] ?? s.service}`;
    const prev = last.get(key);
    if (prev !== undefined && s.tMs > prev) gaps.push(s.tMs - prev);
    last.set(key, s.tMs);
  }
  if (gaps.length < 3) return 1000;
  gaps.sort((a, b) => a - b);
  return gaps[Math.floor(gaps.length / 2)]!;
}

/**
 * Changes of each partition's leader set over time, from is-leader gauges (node = label or
 * service). A node's last value stands only while its samples keep coming: one whose samples
 * stopped (killed, paused, cut off from the scraper) for more than STALE_SCRAPES of its own
 * scrape intervals no longer counts as leading — a dead leader is not "both led" beside its
 * successor.
 */
export function leadershipTimeline(run: RunData, untilMs = Number.POSITIVE_INFINITY): LeadershipChange[] {
  const samples = run.series
    .filter((s) => s.name === metricNames.processorIsLeader && s.labels['partition'] !== undefined)
    .filter((s) => s.tMs <= untilMs)
    .sort((a, b) => a.tMs - b.tMs);
  const staleMs = STALE_SCRAPES * scrapeIntervalMs(samples);
  const value = new Map<string, Map<string, { v: number; tMs: number }>>(); // partition → node → last sample
  const shown = new Map<string, string>();
  const changes: LeadershipChange[] = [];
  // One scrape's samples share a time: apply them all before comparing, so a leader moving
  // from one node to another within a scrape is one change, not two.
  for (let i = 0; i < samples.length;) {
    const tMs = samples[i]!.tMs;
    for (; i < samples.length && samples[i]!.tMs === tMs; i++) {
      const s = samples[i]!;
      const p = s.labels['partition']!;
      let m = value.get(p);
      if (m === undefined) value.set(p, (m = new Map<string, { v: number; tMs: number }>()));
      m.set(s.labels['node'] ?? s.service, { v: s.value, tMs });
    }
    // Every partition is looked at each scrape: a node going stale changes its partition's
    // leaders even when nothing of that partition was sampled this time.
    for (const [p, m] of value) {
      const leaders = [...m]
        .filter(([, last]) => last.v === 1 && tMs - last.tMs <= staleMs)
        .map(([n]) => n)
        .sort();
      if (shown.get(p) !== leaders.join()) {
        shown.set(p, leaders.join());
        changes.push({ tMs, partition: p, leaders });
      }
    }
  }
  return changes;
}

export interface PartitionLeadershipOptions {
  /** A partition without exactly one leader for this long at the deadline is stuck (default 10 s). */
  stuckAfterMs?: number;
}

export function partitionLeadership(options: PartitionLeadershipOptions = {}): Checker {
  const name = 'partitionLeadership';
  const stuckAfterMs = options.stuckAfterMs ?? 10_000;
  return {
    name,
    check(run: RunData): CheckResult {
      const heal = finalHealMs(run) ?? 0;
      const deadline = runEndMs(run);
      const timeline = leadershipTimeline(run, deadline);
      if (timeline.length === 0)
        return result(
          name,
          'inconclusive',
          `no samples of ${metricNames.processorIsLeader} (${scrapedInstead(run.series, [metricNames.processorIsLeader])})`,
        );
      const lastAt = new Map<string, number>();
      const end = new Map<string, string[]>();
      for (const c of timeline) end.set(c.partition, c.leaders);
      for (const s of run.series)
        if (s.name === metricNames.processorIsLeader && s.tMs <= deadline)
          lastAt.set(
            s.labels['partition'] ?? '',
            Math.max(lastAt.get(s.labels['partition'] ?? '') ?? 0, s.tMs),
          );
      const stale = [...lastAt].filter(([, t]) => t < heal).map(([p]) => p);
      const unsettled = [...end]
        .filter(([p, leaders]) => leaders.length !== 1 && !stale.includes(p))
        .map(([p, leaders]) => ({ partition: p, leaders, since: sinceOf(timeline, p) }));
      const bad = unsettled.filter((u) => deadline - u.since >= stuckAfterMs);
      const settling = unsettled.filter((u) => deadline - u.since < stuckAfterMs);
      const details = {
        partitions: end.size,
        healedAtMs: heal,
        deadlineMs: deadline,
        stalePartitions: stale,
        stuckAfterMs,
        settling,
        atDeadline: Object.fromEntries(end),
        timeline: timeline.slice(-MAX_TIMELINE),
      };
      if (bad.length > 0)
        return result(
          name,
          'fail',
          bad
            .map(
              (b) =>
                `partition ${b.partition} has ${b.leaders.length === 0 ? 'no leader' : `${b.leaders.length} leaders (${b.leaders.join(', ')})`} since ${(b.since / 1000).toFixed(1)} s`,
            )
            .join('; ') + ` at the deadline (stuck: ${stuckAfterMs / 1000} s or more)`,
          {
            details: { ...details, bad },
            moments: bad.map((b) => ({
              fromMs: b.since,
              toMs: deadline,
              what:
                b.leaders.length === 0
                  ? 'no leader until the deadline'
                  : `${b.leaders.join(' and ')} both leading until the deadline`,
              ...(Number.isInteger(Number(b.partition)) ? { partition: Number(b.partition) } : {}),
            })),
          },
        );
      if (stale.length === end.size)
        return result(
          name,
          'inconclusive',
          `no leadership sample after the final heal at ${Math.round(heal)} ms (the last at ${Math.round(Math.max(...lastAt.values()))} ms: were the processors still down?)`,
          { details },
        );
      if (settling.length > 0)
        return result(
          name,
          'pass',
          `no partition stuck without exactly one leader for ${stuckAfterMs / 1000} s; still electing at the deadline (for less than that): ${settling.map((u) => `partition ${u.partition} since ${(u.since / 1000).toFixed(1)} s`).join(', ')}`,
          { details },
        );
      return result(
        name,
        'pass',
        `every one of ${end.size - stale.length} partitions has exactly one leader at the deadline`,
        {
          details,
        },
      );
    },
  };
}

function sinceOf(timeline: readonly LeadershipChange[], partition: string): number {
  let t = 0;
  for (const c of timeline) if (c.partition === partition) t = c.tMs;
  return t;
}
