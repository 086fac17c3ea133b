// Durations in suites are strings a human reads ('5s', '500ms', '1m') or numbers of ms.
import { UsageError } from './errors.js';

export type Duration = string | number;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDurationMs(d: Duration): number {
  if (typeof d === 'number') {
    if (!Number.isFinite(d) || d < 0)
      throw new UsageError(`bad duration ${d}: need a finite number of ms >= 0`);
    return d;
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/.exec(d);
  if (m === null) throw new UsageError(`bad duration '${d}': use e.g. '500ms', '5s', '1m'`);
  return Math.round(Number(m[1]) * UNIT_MS[m[2]!]!);
}
