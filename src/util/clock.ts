// The run's clock, injected: monotonic ms since the run started plus wall time for humans.
import { performance } from 'node:perf_hooks';

export interface Clock {
  /** Monotonic ms since the clock's origin. */
  nowMs(): number;
  wallTime(): string;
}

export function createClock(): Clock {
  const origin = performance.now();
  return {
    nowMs: () => Math.round((performance.now() - origin) * 1000) / 1000,
    wallTime: () => new Date().toISOString(),
  };
}
