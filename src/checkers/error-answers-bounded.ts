// Wrong answers are failures too: an op that ends with an error answer was not served. Per
// fault window (from its injection to `graceMs` after its heal) and outside every window, and
// per op kind, the share of ops answered with an error must stay under `maxShare`. A fault
// may slow calls down; the fixed protocol resends until the cluster serves them again, so it
// should not turn them into errors. Evidence names the window, the kind, the share and ops.
import { runEndMs, type RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { clientOps, describeOp, ids, isErrorAnswer, opsLiveIn, windowLabel } from './op-answers.js';

export interface ErrorAnswersBoundedOptions {
  /** Largest share of error answers per window and op kind (default 0.02). */
  maxShare?: number;
  /** Fewer errors than this in a bucket never fail it (noise floor, default 2). */
  minErrors?: number;
  graceMs?: number;
}

export function errorAnswersBounded(options: ErrorAnswersBoundedOptions = {}): Checker {
  const name = 'errorAnswersBounded';
  const maxShare = options.maxShare ?? 0.02;
  const minErrors = options.minErrors ?? 2;
  const graceMs = options.graceMs ?? 3000;
  return {
    name,
    check(run: RunData): CheckResult {
      const ops = clientOps(run);
      if (ops.length === 0) return result(name, 'inconclusive', 'no client ops were recorded');
      const end = runEndMs(run);
      const buckets: { label: string; ops: typeof ops }[] = run.faults.map((w) => ({
        label: windowLabel(w),
        ops: opsLiveIn(ops, w.injectedAtMs, (w.healedAtMs ?? end) + graceMs, end),
      }));
      const inWindow = new Set(buckets.flatMap((b) => b.ops));
      buckets.push({ label: 'no fault', ops: ops.filter((p) => !inWindow.has(p)) });
      const perBucket = [];
      const bad = [];
      for (const b of buckets) {
        const kinds = [...new Set(b.ops.map((p) => p.invoke.kind))].sort();
        for (const kind of kinds) {
          const mine = b.ops.filter((p) => p.invoke.kind === kind);
          const errors = mine.filter(isErrorAnswer);
          const share = errors.length / mine.length;
          const row = { window: b.label, kind, ops: mine.length, errors: errors.length, share: round(share) };
          perBucket.push(row);
          if (errors.length >= minErrors && share > maxShare) bad.push({ ...row, errorOps: errors });
        }
      }
      const details = { maxShare, perBucket };
      if (bad.length === 0)
        return result(name, 'pass', `error answers within ${pct(maxShare)} in every window and op kind`, {
          details,
        });
      const errorOps = bad.flatMap((b) => b.errorOps);
      return result(
        name,
        'fail',
        bad
          .map(
            (b) =>
              `${b.errors} of ${b.ops} ${b.kind} ops (${pct(b.share)}) answered with an error during ${b.window}`,
          )
          .join('; '),
        {
          invocationIds: ids(errorOps).slice(0, 200),
          details: { ...details, examples: errorOps.slice(0, 20).map((p) => describeOp(p, run)) },
        },
      );
    },
  };
}

const round = (x: number): number => Math.round(x * 1000) / 1000;
const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
