// The post-heal wedge: once a fault heals, latency must come back near its pre-fault baseline.
// Baseline: the p90 latency of ops invoked before the first fault. For each fault window, the
// ops invoked from `recoverMs` after its heal until the next fault (or the end of chaos) must
// have a p90 under max(baseline × factor, baseline + slackMs); an op never answered counts
// with its time open. Ops still unanswered that long past the recovery time wedge the window
// too (a closed loop of stuck clients makes no new ops).
// Windows with fewer than `minOps` ops and no stuck ones are not judged.
import { runEndMs, type RunData } from '../run-data/run-data.js';
import { notApplicable, result, type Checker, type CheckResult } from './checker.js';
import { clientOps, describeOp, ids, quantile, windowLabel } from './op-answers.js';

export interface LatencyRecoversOptions {
  recoverMs?: number;
  factor?: number;
  slackMs?: number;
  minOps?: number;
}

/** Ops stuck after a heal that make a window wedged even when few new ops were made. */
const MIN_STUCK = 2;

export function latencyRecovers(options: LatencyRecoversOptions = {}): Checker {
  const name = 'latencyRecovers';
  const recoverMs = options.recoverMs ?? 3000;
  const factor = options.factor ?? 4;
  const slackMs = options.slackMs ?? 1500;
  const minOps = options.minOps ?? 10;
  return {
    name,
    check(run: RunData): CheckResult {
      if (run.faults.length === 0)
        return notApplicable(name, 'the run injected no fault (no heal to recover from)');
      const ops = clientOps(run);
      const end = runEndMs(run);
      const lat = (p: (typeof ops)[number]): number => (p.end?.timeMs ?? end) - p.invoke.timeMs;
      const firstFault = Math.min(...run.faults.map((w) => w.injectedAtMs));
      const before = ops
        .filter((p) => p.invoke.timeMs < firstFault && p.end?.type === 'ok')
        .map(lat)
        .sort((a, b) => a - b);
      if (before.length < minOps) {
        const first = run.faults.find((w) => w.injectedAtMs === firstFault)!;
        return result(
          name,
          'inconclusive',
          `only ${before.length} ops answered ok before the first fault (${windowLabel(first)} at ${Math.round(firstFault)} ms; a baseline needs ${minOps})`,
          { details: { okBeforeFirstFault: before.length, minOps, firstFaultAtMs: Math.round(firstFault) } },
        );
      }
      const baseline = quantile(before, 0.9);
      const bound = Math.max(baseline * factor, baseline + slackMs);
      const chaosEnd = run.phases.chaosEndMs ?? end;
      const perWindow = [];
      const wedged = [];
      for (const w of run.faults) {
        if (w.healedAtMs === undefined) {
          perWindow.push({ window: windowLabel(w), ops: 0, judged: false, notHealed: true });
          continue;
        }
        const from = w.healedAtMs + recoverMs;
        const nextInject = Math.min(
          chaosEnd,
          ...run.faults.filter((x) => x.injectedAtMs > w.injectedAtMs).map((x) => x.injectedAtMs),
        );
        const after = ops.filter((p) => p.invoke.timeMs >= from && p.invoke.timeMs < nextInject);
        // A closed-loop workload makes few new ops once its clients are stuck: ops still
        // unanswered `bound` past the recovery time (made during the fault or after it) are the
        // wedge itself, unless the next fault has begun by then.
        const stuck =
          from + bound >= nextInject
            ? []
            : ops.filter(
                (p) =>
                  p.invoke.timeMs < nextInject &&
                  (p.end?.timeMs ?? end) > Math.max(from, p.invoke.timeMs) + bound,
              );
        if (after.length < minOps && stuck.length < MIN_STUCK) {
          perWindow.push({ window: windowLabel(w), ops: after.length, judged: false });
          continue;
        }
        const p90 = quantile(
          after.map(lat).sort((a, b) => a - b),
          0.9,
        );
        perWindow.push({
          window: windowLabel(w),
          fromMs: from,
          toMs: nextInject,
          ops: after.length,
          p90Ms: Math.round(p90),
          stuckAfterHeal: stuck.length,
          judged: true,
        });
        if (p90 > bound || stuck.length >= MIN_STUCK)
          wedged.push({
            w,
            p90,
            stuck: stuck.length,
            slow: [...new Set([...stuck, ...after.filter((p) => lat(p) > bound)])],
          });
      }
      const details = {
        baselineP90Ms: Math.round(baseline),
        boundMs: Math.round(bound),
        recoverMs,
        perWindow,
      };
      if (wedged.length > 0) {
        const slow = wedged.flatMap((x) => x.slow);
        return result(
          name,
          'fail',
          wedged
            .map(
              (x) =>
                (x.p90 <= bound
                  ? `${x.stuck} ops still unanswered ${Math.round(bound)} ms past the ${recoverMs} ms recovery after ${windowLabel(x.w)} healed`
                  : `p90 latency ${Math.round(x.p90)} ms from ${recoverMs} ms after ${windowLabel(x.w)} healed`) +
                ` (baseline ${Math.round(baseline)} ms, bound ${Math.round(bound)} ms)`,
            )
            .join('; '),
          {
            invocationIds: ids(slow).slice(0, 200),
            details: { ...details, slowest: slow.slice(0, 20).map((p) => describeOp(p, run)) },
          },
        );
      }
      if (!perWindow.some((p) => p.judged))
        return result(
          name,
          'inconclusive',
          `no fault window had ${minOps} ops after its heal to judge (${perWindow
            .slice(0, 6)
            .map(
              (p) =>
                `${p.window}: ${'notHealed' in p ? 'never healed' : `${p.ops} ops from ${recoverMs} ms after the heal`}`,
            )
            .join('; ')}${perWindow.length > 6 ? `; ${perWindow.length - 6} more` : ''})`,
          { details },
        );
      return result(
        name,
        'pass',
        `latency back under ${Math.round(bound)} ms after every heal (baseline p90 ${Math.round(baseline)} ms)`,
        { details },
      );
    },
  };
}
