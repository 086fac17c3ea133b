// Error classes the protocol says cannot happen. The workload only names services and
// handlers that exist and invocation ids the cluster gave it, so:
// - a 4xx (not found, bad request …) is a wrong final answer: a stale replica answered for
//   the leader, or an acknowledged invocation vanished;
// - a 500/502 for a call is an internal error the ingress should have resent through, since
//   the cluster served calls again afterwards (failover happened). 503 (overload, retry) and
//   504 (the client's own deadline) are honest answers and left to other checks.
import type { RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { clientOps, describeOp, errorMessageOf, ids, statusOf } from './op-answers.js';

export function noImpossibleErrors(): Checker {
  const name = 'noImpossibleErrors';
  return {
    name,
    check(run: RunData): CheckResult {
      const ops = clientOps(run);
      if (ops.length === 0) return result(name, 'inconclusive', 'no client ops were recorded');
      // It reads HTTP statuses: answers without one (a client adapter's) leave it nothing to judge.
      if (!ops.some((p) => statusOf(p) !== undefined))
        return result(
          name,
          'inconclusive',
          `none of the ${ops.length} client ops carried an HTTP status (a client adapter's answers have none): nothing to judge; declare the check inapplicable on this target`,
          { details: { ops: ops.length, withStatus: 0 } },
        );
      const lastOkMs = Math.max(-1, ...ops.filter((p) => p.end?.type === 'ok').map((p) => p.end!.timeMs));
      const finalNo = ops.filter((p) => {
        const s = statusOf(p);
        return s !== undefined && s >= 400 && s < 500 && s !== 429;
      });
      const internal = ops.filter((p) => {
        const s = statusOf(p);
        return s !== undefined && s >= 500 && s !== 503 && s !== 504 && p.end!.timeMs < lastOkMs;
      });
      const details = {
        ops: ops.length,
        finalErrors: finalNo.length,
        internalErrors: internal.length,
        examples: [...finalNo, ...internal].slice(0, 20).map((p) => describeOp(p, run)),
      };
      if (finalNo.length === 0 && internal.length === 0)
        return result(name, 'pass', `no impossible error answer in ${ops.length} ops`, { details });
      const parts = [];
      if (finalNo.length > 0) {
        const first = finalNo[0]!;
        parts.push(
          `${finalNo.length} ops got a final ${statusOf(first)} for a valid request (e.g. ${first.invoke.kind} ${first.end?.invocationId ?? first.invoke.invocationId ?? ''}: "${errorMessageOf(first) ?? ''}")`,
        );
      }
      if (internal.length > 0) {
        const first = internal[0]!;
        parts.push(
          `${internal.length} ops got ${statusOf(first)} although the cluster served calls afterwards (e.g. "${errorMessageOf(first) ?? ''}")`,
        );
      }
      return result(name, 'fail', parts.join('; '), {
        invocationIds: ids([...finalNo, ...internal]).slice(0, 200),
        details,
      });
    },
  };
}
