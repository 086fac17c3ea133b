// The leadership timeline of a Restate run: `restatectl partitions list` through a live node's
// REAL fabric port (never a proxy, so faults do not blind it) every `intervalMs`, each change
// appended to `leadership.jsonl` and kept as gauges/counters under limbo's canonical names on a
// small /metrics endpoint, so the runner scrapes them like any service's:
//   limbo_processor_is_leader{partition,node}          1 while restatectl shows it in Leader mode
//   limbo_processor_leader_epoch{partition}            the leader's epoch
//   limbo_processor_leadership_changes_total{partition} leader (node or epoch) changed between views
// Derived from successive views (restate has no such metrics): a change shorter than the
// interval can be missed; each view is one node's view of the cluster, named in the jsonl.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Counter, Gauge, Registry } from 'prom-client';
import type { Observer } from '../../observe/observer.js';
import { metricNames } from '../../protocol/names.js';
import { startMetricsServer } from '../../telemetry/metrics.js';
import { listPartitionProcessors, type PartitionProcessor } from './partitions.js';
import type { RestateNode } from './restate-node.js';

export interface LeadershipView {
  wallTime: string;
  /** The node whose real fabric port answered. */
  observer: string;
  /** Partition → nodes in Leader mode (`n2@e3`); empty when none leads. */
  leaders: Record<string, string[]>;
}

/** A run observer (it runs for the target's life; the runner scrapes its /metrics like a service's). */
export interface LeadershipObserver extends Observer {
  readonly metricsUrl: string;
  /** Every change seen (the first view included), oldest first; bounded. */
  readonly timeline: readonly LeadershipView[];
  /** The last view, if any. */
  last(): LeadershipView | undefined;
  stop(): Promise<void>;
}

const MAX_TIMELINE = 10_000;
const QUERY_TIMEOUT_MS = 5_000;

export function viewOf(rows: readonly PartitionProcessor[], observer: string): LeadershipView {
  const leaders: Record<string, string[]> = {};
  for (const r of rows) {
    leaders[String(r.partition)] ??= [];
    if (r.mode === 'Leader') leaders[String(r.partition)]!.push(`n${r.nodeId}@e${r.epoch ?? '?'}`);
  }
  for (const list of Object.values(leaders)) list.sort();
  return { wallTime: new Date().toISOString(), observer, leaders };
}

export async function startLeadershipObserver(options: {
  nodes: readonly RestateNode[];
  jsonlPath: string;
  intervalMs?: number;
}): Promise<LeadershipObserver> {
  const intervalMs = options.intervalMs ?? 1000;
  const registry = new Registry();
  const isLeader = new Gauge({
    name: metricNames.processorIsLeader,
    help: 'restatectl shows this node leading the partition (derived by limbo)',
    labelNames: ['partition', 'node'],
    registers: [registry],
  });
  const epoch = new Gauge({
    name: metricNames.processorLeaderEpoch,
    help: "the partition leader's epoch as restatectl shows it (derived by limbo)",
    labelNames: ['partition'],
    registers: [registry],
  });
  const changes = new Counter({
    name: metricNames.processorLeadershipChangesTotal,
    help: 'leader node or epoch changed between two restatectl views (derived by limbo)',
    labelNames: ['partition'],
    registers: [registry],
  });
  const server = await startMetricsServer(registry, '127.0.0.1', 0);
  mkdirSync(dirname(options.jsonlPath), { recursive: true });
  const timeline: LeadershipView[] = [];
  let last: LeadershipView | undefined;
  let busy = false;
  let stopped = false;

  const apply = (view: LeadershipView): void => {
    for (const [p, list] of Object.entries(view.leaders)) {
      const before = last?.leaders[p] ?? [];
      if (last !== undefined && before.join() !== list.join()) changes.inc({ partition: p });
      else changes.inc({ partition: p }, 0);
      for (const n of options.nodes) {
        const leads = list.some((l) => l.startsWith(`n${n.index}@`));
        isLeader.set({ partition: p, node: `node-${n.index}` }, leads ? 1 : 0);
      }
      const e = Number(/@e(\d+)/.exec(list[0] ?? '')?.[1]);
      if (Number.isFinite(e)) epoch.set({ partition: p }, e);
    }
    const changed = last === undefined || JSON.stringify(last.leaders) !== JSON.stringify(view.leaders);
    last = view;
    if (changed) {
      if (timeline.length < MAX_TIMELINE) timeline.push(view);
      appendFileSync(options.jsonlPath, JSON.stringify(view) + '\n');
    }
  };

  const poll = async (): Promise<void> => {
    if (busy || stopped) return;
    busy = true;
    try {
      for (const n of options.nodes.filter((x) => x.isRunning() && !x.isPaused())) {
        try {
          apply(viewOf(await listPartitionProcessors(n.fabricAddress, QUERY_TIMEOUT_MS), `node-${n.index}`));
          return;
        } catch {
          // try the next live node
        }
      }
    } finally {
      busy = false;
    }
  };
  await poll();
  const timer = setInterval(() => void poll(), intervalMs);
  return {
    name: 'restate leadership',
    metricsUrl: server.url,
    timeline,
    last: () => last,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await server.stop();
    },
  };
}
