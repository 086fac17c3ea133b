// Wrong answers are failures too: an op that ends with an error answer was not served. Two
// views, either fails the check:
// - per fault window (from its injection to `graceMs` after its heal) and outside every
//   window, and per op kind, the share of ops answered with an error must stay under
//   `maxShare`;
// - a burst: error answers that end together (each within `burstGapMs` of the one before) are
//   the ops one event turned into errors (a leader stepping down, a link reset). Measured
//   against the ops in flight at that moment, not against a whole window (where a few seconds
//   of served calls dilute them), their share must stay under `burstShare`.
// A fault may slow calls down; the fixed protocol resends until the cluster serves them again,
// so it should not turn them into errors. Evidence names the window, the kind, the share and
// the ops.
import { runEndMs, type PairedOp, type RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import {
  clientOps,
  describeOp,
  errorMessageOf,
  ids,
  isErrorAnswer,
  opsLiveIn,
  statusOf,
  windowLabel,
} from './op-answers.js';

export interface ErrorAnswersBoundedOptions {
  /** Largest share of error answers per window and op kind (default 0.02). */
  maxShare?: number;
  /** Fewer errors than this in a bucket never fail it (noise floor, default 2). */
  minErrors?: number;
  graceMs?: number;
  /** Largest share of the ops in flight at one moment that a burst may turn into errors (default 0.1). */
  burstShare?: number;
  /** Fewer error answers than this together are never a burst (default 3). */
  burstMinErrors?: number;
  /** Error answers ending within this of the one before belong to one burst (default 100 ms). */
  burstGapMs?: number;
}

interface Burst {
  atMs: number;
  untilMs: number;
  window: string;
  errors: PairedOp[];
  inFlight: number;
  share: number;
}

export function errorAnswersBounded(options: ErrorAnswersBoundedOptions = {}): Checker {
  const name = 'errorAnswersBounded';
  const maxShare = options.maxShare ?? 0.02;
  const minErrors = options.minErrors ?? 2;
  const graceMs = options.graceMs ?? 3000;
  const burstShare = options.burstShare ?? 0.1;
  const burstMinErrors = options.burstMinErrors ?? 3;
  const burstGapMs = options.burstGapMs ?? 100;
  return {
    name,
    check(run: RunData): CheckResult {
      const ops = clientOps(run);
      if (ops.length === 0) return result(name, 'inconclusive', 'no client ops were recorded');
      const end = runEndMs(run);
      const windows = run.faults.map((w) => ({
        label: windowLabel(w),
        fromMs: w.injectedAtMs,
        toMs: (w.healedAtMs ?? end) + graceMs,
      }));
      const buckets: { label: string; ops: typeof ops }[] = windows.map((w) => ({
        label: w.label,
        ops: opsLiveIn(ops, w.fromMs, w.toMs, end),
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
      const bursts = findBursts(ops, end, burstGapMs, burstMinErrors, (ms) =>
        windows.filter((w) => ms >= w.fromMs && ms <= w.toMs).map((w) => w.label),
      );
      const badBursts = bursts.filter((b) => b.share > burstShare);
      const details = {
        maxShare,
        perBucket,
        burstShare,
        bursts: bursts.map((b) => ({
          atMs: Math.round(b.atMs),
          untilMs: Math.round(b.untilMs),
          window: b.window,
          errors: b.errors.length,
          inFlight: b.inFlight,
          share: round(b.share),
        })),
      };
      if (bad.length === 0 && badBursts.length === 0)
        return result(
          name,
          'pass',
          `error answers within ${pct(maxShare)} in every window and op kind, and no burst over ${pct(burstShare)} of the ops in flight`,
          { details },
        );
      const errorOps = [
        ...new Set([...badBursts.flatMap((b) => b.errors), ...bad.flatMap((b) => b.errorOps)]),
      ];
      const parts = [
        ...badBursts.map(
          (b) =>
            `a burst of ${b.errors.length} error answers at ${(b.atMs / 1000).toFixed(1)} s during ${b.window}: ${b.errors.length} of the ${b.inFlight} ops in flight (${pct(b.share)}) got ${statusesOf(b.errors)}${exampleMessage(b.errors)}`,
        ),
        ...bad.map(
          (b) =>
            `${b.errors} of ${b.ops} ${b.kind} ops (${pct(b.share)}) answered with an error during ${b.window}`,
        ),
      ];
      return result(name, 'fail', parts.join('; '), {
        invocationIds: ids(errorOps).slice(0, 200),
        details: { ...details, examples: errorOps.slice(0, 20).map((p) => describeOp(p, run)) },
      });
    },
  };
}

/**
 * Groups error answers by end time (each within `gapMs` of the one before) and measures each
 * group of at least `minErrors` against the ops in flight from its first end to its last.
 */
function findBursts(
  ops: readonly PairedOp[],
  endMs: number,
  gapMs: number,
  minErrors: number,
  windowsAt: (ms: number) => string[],
): Burst[] {
  const errors = ops.filter(isErrorAnswer).sort((a, b) => a.end!.timeMs - b.end!.timeMs);
  const groups: PairedOp[][] = [];
  for (const e of errors) {
    const last = groups.at(-1);
    if (last !== undefined && e.end!.timeMs - last.at(-1)!.end!.timeMs <= gapMs) last.push(e);
    else groups.push([e]);
  }
  const out: Burst[] = [];
  for (const g of groups) {
    if (g.length < minErrors) continue;
    const atMs = g[0]!.end!.timeMs;
    const untilMs = g.at(-1)!.end!.timeMs;
    // In flight at the burst: invoked by its end and not ended before its start (the errors
    // themselves included).
    const inFlight = opsLiveIn(ops, atMs, untilMs, endMs).length;
    const labels = windowsAt(atMs);
    out.push({
      atMs,
      untilMs,
      window: labels.length > 0 ? labels.join(' + ') : 'no fault',
      errors: g,
      inFlight,
      share: g.length / inFlight,
    });
  }
  return out;
}

function statusesOf(errors: readonly PairedOp[]): string {
  const counts = new Map<number, number>();
  for (const e of errors) {
    const s = statusOf(e)!;
    counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  return [...counts].map(([s, n]) => (counts.size === 1 ? `${s}` : `${n}× ${s}`)).join(', ');
}

function exampleMessage(errors: readonly PairedOp[]): string {
  const m = errors.map(errorMessageOf).find((x) => x !== undefined);
  return m === undefined ? '' : ` (e.g. "${m}")`;
}

const round = (x: number): number => Math.round(x * 1000) / 1000;
const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
