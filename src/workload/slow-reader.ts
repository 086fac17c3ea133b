// Slow readers: a share of requests whose client reads its answer slowly, as a phone on a poor
// link or a client busy elsewhere does. The client either stops reading for `pauseMs` once the
// answer starts, or reads it at `bytesPerSec` (after each chunk it pauses for as long as that
// chunk takes at the rate). While it does not read, its socket stops reading: the connection's
// receive window fills and the server's writes of a large enough answer wait for it (TCP
// backpressure). The request's own timeout still bounds the whole wait.
//
//   request ─▶ draw(fork 'slow-reader-<client>') ─▶ none: read at once
//                                                 └▶ slow: pause, or read at bytesPerSec
//
// Decisions come from their own fork of the run's random stream, one fork per client and one
// draw per request, so a seed replays the same decisions and a workload without slow readers
// draws exactly what it drew before.
import type { Random } from '../util/random.js';
import { UsageError } from '../util/errors.js';
import type { HttpClient, SlowRead } from './http-client.js';

export type { SlowRead } from './http-client.js';

export interface SlowReaderSpec {
  /** Share of requests (0 … 1) whose client reads the answer slowly. */
  fraction: number;
  /** The client reads the answer at this many bytes a second (give this or `pauseMs`). */
  bytesPerSec?: number;
  /** The client stops reading this long once the answer starts (give this or `bytesPerSec`). */
  pauseMs?: number;
}

/** A checked slow-reader spec. */
export interface SlowReaderPlan {
  readonly fraction: number;
  readonly read: SlowRead;
}

/** The longest pause accepted: past it the op's own timeout is the better tool. */
export const SLOW_READ_PAUSE_MS_MAX = 600_000;
/** The slowest rate accepted: one byte a second would outlast any run. */
export const SLOW_READ_BYTES_PER_SEC_MIN = 64;

/** Checks a slow-reader spec (a UsageError naming the field that is wrong); undefined stays off. */
export function parseSlowReaders(
  spec: SlowReaderSpec | undefined,
  where = 'workload.slowReaders',
): SlowReaderPlan | undefined {
  if (spec === undefined) return undefined;
  if (typeof spec !== 'object' || spec === null)
    throw new UsageError(
      `${where} must be an object like { fraction: 0.2, bytesPerSec: 4096 } or { fraction: 0.2, pauseMs: 500 }`,
    );
  const { fraction, bytesPerSec, pauseMs } = spec;
  if (typeof fraction !== 'number' || !(fraction >= 0 && fraction <= 1))
    throw new UsageError(`${where}.fraction must be a number from 0 to 1, got ${String(fraction)}`);
  if ((bytesPerSec === undefined) === (pauseMs === undefined))
    throw new UsageError(`${where} needs exactly one of bytesPerSec and pauseMs`);
  if (bytesPerSec !== undefined) {
    if (!Number.isInteger(bytesPerSec) || bytesPerSec < SLOW_READ_BYTES_PER_SEC_MIN)
      throw new UsageError(
        `${where}.bytesPerSec must be a whole number ≥ ${SLOW_READ_BYTES_PER_SEC_MIN}, got ${String(bytesPerSec)}`,
      );
    return { fraction, read: { bytesPerSec } };
  }
  if (!Number.isInteger(pauseMs) || pauseMs! < 0 || pauseMs! > SLOW_READ_PAUSE_MS_MAX)
    throw new UsageError(
      `${where}.pauseMs must be whole ms from 0 to ${SLOW_READ_PAUSE_MS_MAX}, got ${String(pauseMs)}`,
    );
  return { fraction, read: { pauseMs: pauseMs! } };
}

/**
 * One client's HTTP client whose requests are read slowly as `plan` draws from `random` (the
 * client's own fork), one draw a request. The underlying client is shared; this only chooses.
 */
export function slowReadingClient(http: HttpClient, plan: SlowReaderPlan, random: Random): HttpClient {
  return {
    request: (url, init) =>
      http.request(url, random.next() < plan.fraction ? { ...init, slowRead: plan.read } : init),
    close: () => http.close(),
  };
}
