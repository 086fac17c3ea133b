// The generic trace check for suite authors: select spans, expect something of them.
//   traces({ name: 'appendsFast', select: { service: 'log', name: 'log append',
//            during: { fault: 'latency' } }, expect: { durationMs: { max: 500 } } })
import { result, type Checker, type CheckResult } from './checker.js';
import { expectSpans, notTraced, selectSpans, type SpanExpect, type SpanSelector } from './span-select.js';
import type { RunData } from '../run-data/run-data.js';
import { spanAttributes as A } from '../protocol/names.js';

export interface TracesOptions {
  /** The check's name in the verdict (default `traces`). */
  name?: string;
  select: SpanSelector;
  expect: SpanExpect;
}

const MAX_LISTED = 50;

export function traces(options: TracesOptions): Checker {
  const name = options.name ?? 'traces';
  return {
    name,
    check(run: RunData): CheckResult {
      if (run.spans === undefined || run.spans.length === 0) return notTraced(name);
      const picked = selectSpans(run, options.select);
      const problems = expectSpans(run, picked, options.expect);
      const details = {
        select: options.select,
        expect: options.expect,
        picked: picked.length,
        problems: problems.slice(0, MAX_LISTED),
      };
      const traceIds = [...new Set(picked.map((s) => s.traceId))].slice(0, MAX_LISTED);
      if (problems.length === 0)
        return result(name, 'pass', `${picked.length} spans picked; the expectation holds`, { details });
      return result(name, 'fail', `${problems.length} problem(s): ${problems[0]!}`, {
        invocationIds: [
          ...new Set(
            picked.map((s) => s.attributes[A.invocationId]).filter((i): i is string => typeof i === 'string'),
          ),
        ].slice(0, MAX_LISTED),
        traceIds,
        details,
      });
    },
  };
}
