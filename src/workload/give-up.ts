// Clients that give up: a share of ops whose client abandons its request before the answer
// (the socket destroyed a seeded random delay after the op began), then either sends the same
// request again with the same idempotency key or walks away. Real clients do both: an SDK's
// own timeout, a user closing a tab, a load balancer cutting a slow request.
//
//   op ─▶ draw(fork 'give-up-<client>') ─▶ none: as before
//                                       └▶ abandon after afterMs ─▶ info (aborted: outcome unknown)
//                                              └▶ retry 'same-key': the same request once more,
//                                                 run to its answer (never abandoned itself)
//
// The abandoned attempt is recorded as `info` (Jepsen: outcome unknown), never `fail`: the
// server may well have run it. Decisions come from their own fork of the run's random stream,
// one fork per client, so a seed replays the same decisions and a workload without give-ups
// draws exactly what it drew before.
import type { Random } from '../util/random.js';
import { UsageError } from '../util/errors.js';

export type GiveUpRetry = 'same-key' | 'none';

export interface GiveUpSpec {
  /** Share of ops (0 … 1) whose client gives up on its request. */
  fraction: number;
  /**
   * The client gives up a uniform whole number of ms in [min, max] after the op began (if the
   * answer came first, nothing is abandoned). Shorter than the ops' latency reaches mid-request.
   */
  afterMs: readonly [number, number];
  /** After giving up: the same request again with the same idempotency key, or nothing. */
  retry: GiveUpRetry;
}

/** A checked give-up spec (the op kinds it applies to are call, send and counterAdd). */
export interface GiveUpPlan {
  readonly fraction: number;
  readonly afterMs: readonly [number, number];
  readonly retry: GiveUpRetry;
}

/** The longest give-up delay accepted: past it the op's own timeout is the better tool. */
export const GIVE_UP_AFTER_MS_MAX = 600_000;

/** Checks a give-up spec (a UsageError naming the field that is wrong); undefined stays off. */
export function parseGiveUp(spec: GiveUpSpec | undefined, where = 'workload.giveUp'): GiveUpPlan | undefined {
  if (spec === undefined) return undefined;
  if (typeof spec !== 'object' || spec === null)
    throw new UsageError(
      `${where} must be an object like { fraction: 0.2, afterMs: [20, 200], retry: 'same-key' }`,
    );
  const { fraction, afterMs, retry } = spec;
  if (typeof fraction !== 'number' || !(fraction >= 0 && fraction <= 1))
    throw new UsageError(`${where}.fraction must be a number from 0 to 1, got ${String(fraction)}`);
  if (
    !Array.isArray(afterMs) ||
    afterMs.length !== 2 ||
    !afterMs.every((x) => Number.isInteger(x) && x >= 0 && x <= GIVE_UP_AFTER_MS_MAX) ||
    afterMs[0] > afterMs[1]
  )
    throw new UsageError(
      `${where}.afterMs must be [min, max]: whole ms, 0 ≤ min ≤ max ≤ ${GIVE_UP_AFTER_MS_MAX}, got ${JSON.stringify(afterMs)}`,
    );
  if (retry !== 'same-key' && retry !== 'none')
    throw new UsageError(`${where}.retry must be 'same-key' or 'none', got ${JSON.stringify(retry)}`);
  return { fraction, afterMs: [afterMs[0], afterMs[1]], retry };
}

/** One client's give-up decisions, drawn in the order of its ops. */
export interface GiveUpDraws {
  readonly retry: GiveUpRetry;
  /** For the client's next op: ms after its start at which it gives up, or undefined (it waits). */
  next(): number | undefined;
}

/**
 * The decisions of one client, from `random` (the client's own fork). Each op takes two draws,
 * whether it gives up or not, so one op's decision never shifts the next one's.
 */
export function giveUpDraws(plan: GiveUpPlan, random: Random): GiveUpDraws {
  const [min, max] = plan.afterMs;
  return {
    retry: plan.retry,
    next: () => {
      const gives = random.next() < plan.fraction;
      const afterMs = random.between(min, max);
      return gives ? afterMs : undefined;
    },
  };
}
