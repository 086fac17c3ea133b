// The one shape of everything that watches a run from outside the system under test: the
// metrics scraper, the run's Prometheus, a target's own observers. The runner drives every
// observer through the same moments, so adding one never adds a branch to the runner:
//
//   start (its factory) ─▶ settle() ─▶ beforeAbort(moment) ─▶ collect(run) ─▶ stop()
//   while the run goes     converged:   deadline stamped,     clients gone:    after the
//                          see the      clients still wait    write what it    checks
//                          present      on open ops           saw into run data
import type { RunData } from '../run-data/run-data.js';
import { messageOf } from '../util/errors.js';

/** The run at its deadline, for observers that query a time range (epoch ms). */
export interface DeadlineMoment {
  readonly run: RunData;
  readonly chaosStartEpochMs: number;
  readonly deadlineEpochMs: number;
}

export interface Observer {
  readonly name: string;
  /** Converged: make sure the live state of this moment has been seen (bounded). */
  settle?(): Promise<void>;
  /** The deadline is stamped and open client ops still wait: read what must be read now. */
  beforeAbort?(moment: DeadlineMoment): Promise<void>;
  /** The clients have stopped: write what it observed into the run data. */
  collect?(run: RunData): Promise<void>;
  /** Stops it; idempotent. */
  stop(): Promise<void>;
}

/** Runs one moment on every observer in order; an observer's failure is logged, never fatal. */
export async function eachObserver(
  observers: readonly Observer[],
  moment: string,
  step: (o: Observer) => Promise<void> | undefined,
  log: (line: string) => void,
): Promise<void> {
  for (const o of observers) {
    try {
      await step(o);
    } catch (err) {
      log(`observer ${o.name}: ${moment} failed: ${messageOf(err)}`);
    }
  }
}
