// Failover has a time bound: when a processor (usually a leader) is killed, paused, restarted
// or deposed, the cluster moves its partitions and the ingress resends, so every op live during
// that window must end within `maxMs` of the later of its invoke and the fault's injection —
// however long the node itself stays down. Faults on links are left out (nothing fails over):
// a run with no fault on a processor is not applicable, not inconclusive.
import { runEndMs, type FaultWindow, type RunData } from '../run-data/run-data.js';
import { faultsOfRun, notApplicable, result, type Checker, type CheckResult } from './checker.js';
import { clientOps, describeOp, ids, opsLiveIn, windowLabel } from './op-answers.js';

export interface FailoverTimeBoundedOptions {
  maxMs?: number;
}

/** Faults on a processor that the cluster must fail over from (also leadershipChanged's). */
export const PROCESS_FAULTS: ReadonlySet<string> = new Set([
  'kill',
  'pause',
  'restart',
  'transfer-leadership',
  // A processor that fails a step of taking leadership, or comes back without its data.
  'leadership-step-failure',
  'data-loss-restart',
  // A processor cut off from the network fails over like a dead one.
  'isolate',
]);

export function hurtsProcessor(w: FaultWindow): boolean {
  return (
    PROCESS_FAULTS.has(w.fault) &&
    (w.leader === true ||
      w.affects.some((a) => /^processor-\d+$/.test(a)) ||
      w.fault === 'transfer-leadership')
  );
}

export function failoverTimeBounded(options: FailoverTimeBoundedOptions = {}): Checker {
  const name = 'failoverTimeBounded';
  const maxMs = options.maxMs ?? 6000;
  return {
    name,
    check(run: RunData): CheckResult {
      const windows = run.faults.filter(hurtsProcessor);
      if (windows.length === 0)
        return notApplicable(
          name,
          `no fault on a processor (nothing to fail over from; ${faultsOfRun(run)})`,
          {
            faults: run.faults.map(windowLabel),
          },
        );
      const ops = clientOps(run);
      const end = runEndMs(run);
      const perWindow = [];
      const slow: { w: FaultWindow; op: (typeof ops)[number]; waitedMs: number }[] = [];
      for (const w of windows) {
        const live = opsLiveIn(ops, w.injectedAtMs, w.healedAtMs ?? end, end);
        let worst = 0;
        for (const op of live) {
          const waited = (op.end?.timeMs ?? end) - Math.max(op.invoke.timeMs, w.injectedAtMs);
          worst = Math.max(worst, waited);
          if (waited > maxMs) slow.push({ w, op, waitedMs: waited });
        }
        perWindow.push({ window: windowLabel(w), ops: live.length, worstMs: Math.round(worst) });
      }
      const details = { maxMs, perWindow };
      if (slow.length === 0)
        return result(name, 'pass', `every op met by a processor fault ended within ${maxMs} ms`, {
          details,
        });
      const worst = slow.reduce((a, b) => (b.waitedMs > a.waitedMs ? b : a));
      return result(
        name,
        'fail',
        `${slow.length} ops waited more than ${maxMs} ms through ${[...new Set(slow.map((s) => windowLabel(s.w)))].join(', ')} (worst ${Math.round(worst.waitedMs)} ms, ${worst.op.end?.invocationId ?? worst.op.invoke.invocationId ?? '?'})`,
        {
          invocationIds: ids(slow.map((s) => s.op)).slice(0, 200),
          details: {
            ...details,
            examples: slow
              .slice(0, 20)
              .map((s) => ({ ...describeOp(s.op, run), waitedMs: Math.round(s.waitedMs) })),
          },
        },
      );
    },
  };
}
