// Open-loop bursts above capacity: every `everyMs` (the first `firstAtMs` after the clients
// start) ops start at `ratePerSec` for `lengthMs`, on top of the steady workload and whatever
// their answers, so the ingress's and the processors' queues and in-flight limits fill and
// their backpressure paths (pending requests, refusals by a limit, long queues per key) run.
//
//   time ─▶ |steady|▇▇ burst ▇▇|steady ……… |▇▇ burst ▇▇| …
//             firstAtMs ─┘  └ lengthMs       └ everyMs after the first
//
// Burst ops are the workload's ops (same kinds, checks and give-ups), made by burst clients of
// their own (their own forks of the run's random stream, their own connections: a burst does
// not queue behind the steady clients' sockets, it reaches the server). `maxInFlight` bounds
// what one burst may have open; an op due while at the bound is not started and is counted.
import { opMixKinds as mixKinds, type OpMix, type OpMixKind } from './mix.js';
import { UsageError } from '../util/errors.js';

export interface BurstSpec {
  /** A burst starts every this many ms. */
  everyMs: number;
  /** Each burst lasts this many ms (at most `everyMs`). */
  lengthMs: number;
  /** Ops started per second during a burst, on top of the steady workload. */
  ratePerSec: number;
  /** The first burst starts this many ms after the clients start (default `everyMs`). */
  firstAtMs?: number;
  /** Bound on burst ops open at once (default: a whole burst's ops, i.e. no bound within one). */
  maxInFlight?: number;
  /** The kinds of op a burst makes (default: the workload's mix). */
  mix?: OpMix;
}

export interface BurstPlan {
  readonly everyMs: number;
  readonly lengthMs: number;
  readonly ratePerSec: number;
  readonly firstAtMs: number;
  readonly maxInFlight: number;
  readonly mix: OpMix | undefined;
}

/** Limits on a burst's spec: an open loop this fast is already far past any one machine. */
export const BURST_RATE_MAX = 20_000;
export const BURST_IN_FLIGHT_MAX = 10_000;

/** Checks a burst spec (a UsageError naming the field that is wrong); undefined stays off. */
export function parseBursts(spec: BurstSpec | undefined, where = 'workload.bursts'): BurstPlan | undefined {
  if (spec === undefined) return undefined;
  if (typeof spec !== 'object' || spec === null)
    throw new UsageError(
      `${where} must be an object like { everyMs: 6000, lengthMs: 1000, ratePerSec: 400 }`,
    );
  const positiveMs = (field: string, v: unknown): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
      throw new UsageError(`${where}.${field} must be a whole number of ms ≥ 1, got ${String(v)}`);
    return v;
  };
  const everyMs = positiveMs('everyMs', spec.everyMs);
  const lengthMs = positiveMs('lengthMs', spec.lengthMs);
  if (lengthMs > everyMs)
    throw new UsageError(
      `${where}.lengthMs (${lengthMs}) must not exceed everyMs (${everyMs}): bursts do not overlap`,
    );
  const { ratePerSec } = spec;
  if (typeof ratePerSec !== 'number' || !(ratePerSec > 0 && ratePerSec <= BURST_RATE_MAX))
    throw new UsageError(
      `${where}.ratePerSec must be a number above 0 and at most ${BURST_RATE_MAX}, got ${String(ratePerSec)}`,
    );
  const firstAtMs = spec.firstAtMs ?? everyMs;
  if (typeof firstAtMs !== 'number' || !Number.isInteger(firstAtMs) || firstAtMs < 0)
    throw new UsageError(`${where}.firstAtMs must be a whole number of ms ≥ 0, got ${String(firstAtMs)}`);
  const perBurst = opsPerBurst(lengthMs, ratePerSec);
  const maxInFlight = spec.maxInFlight ?? Math.min(BURST_IN_FLIGHT_MAX, Math.max(1, perBurst));
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1 || maxInFlight > BURST_IN_FLIGHT_MAX)
    throw new UsageError(
      `${where}.maxInFlight must be a whole number from 1 to ${BURST_IN_FLIGHT_MAX}, got ${String(maxInFlight)}`,
    );
  const { mix } = spec;
  if (mix !== undefined) {
    const entries = typeof mix === 'object' && mix !== null ? Object.entries(mix) : [];
    const bad = entries.find(
      ([k, w]) =>
        !mixKinds.includes(k as OpMixKind) || typeof w !== 'number' || !(w >= 0) || !Number.isFinite(w),
    );
    if (entries.length === 0 || bad !== undefined || !entries.some(([, w]) => w > 0))
      throw new UsageError(
        `${where}.mix must weigh some of ${mixKinds.join(', ')} with numbers ≥ 0, one above 0` +
          (bad !== undefined ? `; got ${bad[0]}: ${String(bad[1])}` : ''),
      );
  }
  return { everyMs, lengthMs, ratePerSec, firstAtMs, maxInFlight, mix };
}

/** Ops one burst starts: its length at its rate, rounded down. */
export function opsPerBurst(lengthMs: number, ratePerSec: number): number {
  return Math.floor((lengthMs * ratePerSec) / 1000);
}

/** Where `elapsedMs` (since the clients started) falls: the burst it is in, if any, and the next start. */
export function burstAt(
  plan: BurstPlan,
  elapsedMs: number,
): { index: number; inBurst: boolean; nextStartMs: number } {
  if (elapsedMs < plan.firstAtMs) return { index: -1, inBurst: false, nextStartMs: plan.firstAtMs };
  const index = Math.floor((elapsedMs - plan.firstAtMs) / plan.everyMs);
  const startMs = plan.firstAtMs + index * plan.everyMs;
  return { index, inBurst: elapsedMs - startMs < plan.lengthMs, nextStartMs: startMs + plan.everyMs };
}

/**
 * Ops due by `elapsedMs` in all bursts so far: each burst's ops spread evenly over its length
 * (the k-th op of a burst at k / ratePerSec s after its start). The runner starts the
 * difference to what it started on each tick, so a late tick catches up instead of losing ops.
 */
export function burstOpsDue(plan: BurstPlan, elapsedMs: number): number {
  const at = burstAt(plan, elapsedMs);
  if (at.index < 0) return 0;
  const startMs = plan.firstAtMs + at.index * plan.everyMs;
  const intoMs = Math.min(elapsedMs - startMs, plan.lengthMs);
  const perBurst = opsPerBurst(plan.lengthMs, plan.ratePerSec);
  // Ops at 0, 1/rate, 2/rate … s into the burst: those at or before intoMs, at most the burst's.
  const current = Math.min(perBurst, Math.floor((intoMs * plan.ratePerSec) / 1000) + 1);
  return at.index * perBurst + (perBurst === 0 ? 0 : current);
}
