// A graceful stop is graceful: a service asked to stop (SIGTERM, as a deploy or a rolling
// restart does) must answer or hand off what it holds and exit within the grace period. One
// that is still running when the grace period ends — waiting on calls it will never answer,
// a drain that cannot finish, a shutdown hook that hangs — is SIGKILLed, and whatever it held
// is lost the hard way: that is a failure even when the clients are answered later.
// Reads the stop outcomes the restart fault records (runtimes that can tell; others: pass,
// saying nothing was measured).
import type { RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { windowLabel } from './op-answers.js';

interface RecordedStop {
  service: string;
  graceful: boolean;
  ms: number;
  graceMs: number;
}

function stopsOf(details: Record<string, unknown> | undefined): RecordedStop[] {
  const stops = details?.['stops'];
  if (!Array.isArray(stops)) return [];
  return stops.filter(
    (s): s is RecordedStop =>
      typeof s === 'object' &&
      s !== null &&
      typeof (s as RecordedStop).service === 'string' &&
      typeof (s as RecordedStop).graceful === 'boolean' &&
      typeof (s as RecordedStop).ms === 'number',
  );
}

export function gracefulStops(): Checker {
  const name = 'gracefulStops';
  return {
    name,
    check(run: RunData): CheckResult {
      const measured = run.faults.flatMap((w) => stopsOf(w.details).map((s) => ({ w, s })));
      if (measured.length === 0)
        return result(
          name,
          'pass',
          'no graceful stop was measured (no restart, or a runtime that cannot tell)',
        );
      const killed = measured.filter(({ s }) => !s.graceful);
      const slowest = Math.max(...measured.map(({ s }) => s.ms));
      const details = {
        stops: measured.map(({ w, s }) => ({ fault: windowLabel(w), atMs: w.injectedAtMs, ...s })),
      };
      if (killed.length > 0)
        return result(
          name,
          'fail',
          `${killed.length} of ${measured.length} graceful stops had to be SIGKILLed: ` +
            killed
              .map(
                ({ w, s }) =>
                  `${s.service} still running ${Math.round(s.graceMs)} ms after SIGTERM (${windowLabel(w)})`,
              )
              .join('; '),
          {
            details,
            moments: killed.map(({ w, s }) => ({
              fromMs: w.injectedAtMs,
              toMs: w.injectedAtMs + Math.max(s.ms, s.graceMs),
              what: `still running ${Math.round(s.graceMs)} ms after SIGTERM, then SIGKILLed`,
              service: s.service,
            })),
          },
        );
      return result(
        name,
        'pass',
        `all ${measured.length} graceful stops exited on SIGTERM (slowest ${Math.round(slowest)} ms)`,
        { details },
      );
    },
  };
}
