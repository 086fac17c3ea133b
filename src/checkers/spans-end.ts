// Every span of an invocation ends: none is still open at the final heal + Δ (or Δ after it
// started, if it started later). Spans that never ended are known from the open-span ledger;
// those of a process that was killed (or restarted) are abandoned work — its successor resumes
// it — and are listed, not failed. An open span on a live process is where a hung invocation
// stopped: the verdict names it, with its service, epoch and why.
import { spanAttributes as A } from '../protocol/names.js';
import { finalHealMs, runEndMs, type RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { notTraced, selectSpans, spanExtent, type SpanSelector } from './span-select.js';

export interface SpansEndOptions {
  withinMsAfterHeal?: number;
  /** Which spans must end (default: every span carrying an invocation id). */
  select?: SpanSelector;
}

const MAX_LISTED = 100;

export function spansEnd(options: SpansEndOptions = {}): Checker {
  const withinMs = options.withinMsAfterHeal ?? 5000;
  const name = 'spansEnd';
  return {
    name,
    check(run: RunData): CheckResult {
      if (run.spans === undefined || run.spans.length === 0) return notTraced(name);
      const heal = finalHealMs(run) ?? 0;
      const end = runEndMs(run);
      const picked = selectSpans(run, options.select ?? { attributes: { [A.invocationId]: true } });
      const late: Record<string, unknown>[] = [];
      const abandoned: Record<string, unknown>[] = [];
      let young = 0;
      for (const s of picked) {
        const x = spanExtent(run, s);
        const bound = Math.max(heal, x.startMs) + withinMs;
        const row = {
          service: s.service,
          span: s.name,
          spanId: s.spanId,
          traceId: s.traceId,
          invocationId: s.attributes[A.invocationId],
          epoch: s.attributes[A.leaderEpoch],
          startedAtMs: Math.round(x.startMs),
        };
        if (s.endMs === null) {
          if (s.open?.cause === 'killed' || s.open?.cause === 'restarted') {
            abandoned.push({ ...row, reason: s.open.reason });
            continue;
          }
          if (end < bound) {
            young++;
            continue;
          }
          late.push({ ...row, reason: s.open?.reason ?? 'never ended' });
        } else if (x.endMs > bound)
          late.push({
            ...row,
            endedAtMs: Math.round(x.endMs),
            reason: `ended ${Math.round(x.endMs - bound)} ms after heal + ${withinMs} ms`,
          });
      }
      // Spans that never ended first (where a hung invocation stopped), then the late ones.
      late.sort(
        (a, b) =>
          Number('endedAtMs' in a) - Number('endedAtMs' in b) ||
          Number(a.startedAtMs) - Number(b.startedAtMs),
      );
      const details = {
        spans: picked.length,
        withinMsAfterHeal: withinMs,
        healedAtMs: heal,
        stillOpen: late.slice(0, MAX_LISTED),
        abandonedByKilledProcesses: abandoned.slice(0, MAX_LISTED),
        abandoned: abandoned.length,
        tooYoungToJudge: young,
        ...(run.spansDropped ? { spansDropped: run.spansDropped } : {}),
      };
      if (late.length === 0)
        return result(
          name,
          'pass',
          `all ${picked.length} invocation spans ended within ${withinMs} ms of the heal` +
            (abandoned.length > 0 ? ` (${abandoned.length} abandoned by killed processes)` : ''),
          { details },
        );
      const first = late[0]!;
      return result(
        name,
        'fail',
        `${late.length} invocation spans still open after heal + ${withinMs} ms; first: ${String(first.service)} "${String(first.span)}" — ${String(first.reason)}`,
        {
          invocationIds: [
            ...new Set(late.map((l) => l.invocationId).filter((i): i is string => typeof i === 'string')),
          ],
          traceIds: [...new Set(late.map((l) => l.traceId as string))],
          details,
        },
      );
    },
  };
}
