// Leadership signals from the declared leadership probe, for a system that exports no metric
// for them: every `intervalMs` one round asks every running processor who leads (each ask
// bounded, all at once) and keeps what the round said, so the signal bridge serves it under
// limbo's names and the scraper, the run's Prometheus, the checks and the report read it as
// they read any service's:
//
//   round: etcd-1 "not me", etcd-2 "I lead", etcd-3 (no answer)
//     ─▶ limbo_processor_is_leader{node="etcd-1",partition="0"} 0
//        limbo_processor_is_leader{node="etcd-2",partition="0"} 1      (etcd-3: no sample)
//        limbo_processor_leadership_changes_total{partition="0",transition="became_leader"} 4
//
// A service that gave no answer gets no sample, so a killed or paused leader drops out of the
// leadership timeline once its samples stop rather than leading on. The counter moves when a
// partition's leaders (the non-empty set of services saying "I lead") differ from the last
// non-empty set seen: a leader that dies and one that takes over is one change, a leader that
// pauses and comes back leading is none. A change shorter than a round can be missed.
import { metricNames } from '../../protocol/names.js';
import type { Sample } from '../../telemetry/prom-text.js';
import { LEADER_ASK_MS, type LeaderAnswer } from './leadership-probe.js';

export interface LeadershipSignalsOptions {
  /** The services to ask now (the running processors). */
  services: () => readonly string[];
  ask: (service: string) => Promise<LeaderAnswer | undefined>;
  intervalMs: number;
  /** The signals to serve (default both): a system may export one of them itself. */
  only?: readonly string[];
}

export interface LeadershipSignals {
  /** The last round's samples, or none when it is older than a few rounds. */
  samples(): Sample[];
  /** Resolves when the round under way (if any) is done. */
  refresh(): Promise<void>;
  stop(): void;
}

export function startLeadershipSignals(options: LeadershipSignalsOptions): LeadershipSignals {
  const { intervalMs } = options;
  /** A round's answers stand until the next round should have ended (one slow ask included). */
  const freshMs = intervalMs + 2 * LEADER_ASK_MS;
  let last: { atMs: number; answers: Map<string, LeaderAnswer> } | undefined;
  const changes = new Map<string, number>();
  const leadersSeen = new Map<string, string>();
  let running: Promise<void> | undefined;
  let stopped = false;

  const apply = (answers: Map<string, LeaderAnswer>): void => {
    const partitions = new Set([...answers.values()].flatMap((a) => [...a.keys()]));
    for (const p of partitions) {
      if (!changes.has(p)) changes.set(p, 0);
      const leaders = [...answers]
        .filter(([, a]) => a.get(p) === true)
        .map(([s]) => s)
        .sort()
        .join(',');
      if (leaders === '') continue;
      const before = leadersSeen.get(p);
      if (before !== undefined && before !== leaders) changes.set(p, changes.get(p)! + 1);
      leadersSeen.set(p, leaders);
    }
    last = { atMs: Date.now(), answers };
  };

  const round = (): Promise<void> =>
    (running ??= (async () => {
      const asked = options.services();
      const said = await Promise.all(asked.map((s) => options.ask(s)));
      const answers = new Map<string, LeaderAnswer>();
      said.forEach((a, i) => a !== undefined && answers.set(asked[i]!, a));
      if (!stopped) apply(answers);
    })().finally(() => (running = undefined)));

  const timer = setInterval(() => void round(), intervalMs);
  timer.unref();
  void round();

  return {
    samples: () => {
      const out: Sample[] = [];
      const serve = (name: string): boolean => options.only === undefined || options.only.includes(name);
      if (serve(metricNames.processorLeadershipChangesTotal))
        for (const [p, n] of changes)
          out.push({
            name: metricNames.processorLeadershipChangesTotal,
            // Each change is one service taking over: the reference processors' transition.
            labels: { partition: p, transition: 'became_leader' },
            value: n,
          });
      if (!serve(metricNames.processorIsLeader) || last === undefined || Date.now() - last.atMs > freshMs)
        return out;
      for (const [node, answer] of last.answers)
        for (const [partition, leads] of answer)
          out.push({
            name: metricNames.processorIsLeader,
            labels: { node, partition },
            value: leads ? 1 : 0,
          });
      return out;
    },
    // The round under way, if any: rounds keep their own pace (a command probe costs a process
    // per service), the bridge's scrapes do not add rounds.
    refresh: () => running ?? Promise.resolve(),
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
