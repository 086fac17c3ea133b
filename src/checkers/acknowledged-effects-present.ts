// Acknowledged effects all present: once the cluster acknowledged an invocation (a send
// answered 202 with its id, a call answered with its output), every later question about that
// invocation must find it. A send whose attach answers "not found", or an invocation id answered
// ok and later not found, is an effect the client was told happened and that is gone. Counter
// effects are weighed by exactlyOnce; this check covers invocations themselves.
import type { RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { clientOps, describeOp, ids, statusOf } from './op-answers.js';

export function acknowledgedEffectsPresent(): Checker {
  const name = 'acknowledgedEffectsPresent';
  return {
    name,
    check(run: RunData): CheckResult {
      const ops = clientOps(run);
      // A send op that ends as info with 404 was accepted (its send answered 202), then not found.
      const lostSends = ops.filter(
        (p) => p.invoke.kind === 'send' && p.end?.type === 'info' && statusOf(p) === 404,
      );
      const okAt = new Map<string, number>();
      for (const p of ops) {
        const id = p.end?.invocationId ?? p.invoke.invocationId;
        if (p.end?.type === 'ok' && id !== undefined)
          okAt.set(id, Math.min(okAt.get(id) ?? Infinity, p.end.timeMs));
      }
      const vanished = ops.filter((p) => {
        const id = p.end?.invocationId ?? p.invoke.invocationId;
        return id !== undefined && statusOf(p) === 404 && (okAt.get(id) ?? Infinity) < p.invoke.timeMs;
      });
      const lost = [...new Set([...lostSends, ...vanished])];
      const acknowledged = ops.filter((p) => p.end?.type === 'ok').length + lostSends.length;
      if (acknowledged === 0) return result(name, 'inconclusive', 'nothing was acknowledged');
      const details = {
        acknowledged,
        lost: lost.length,
        examples: lost.slice(0, 20).map((p) => describeOp(p, run)),
      };
      if (lost.length === 0)
        return result(name, 'pass', `all ${acknowledged} acknowledged invocations stayed present`, {
          details,
        });
      const lostIds = ids(lost);
      return result(
        name,
        'fail',
        `${lost.length} acknowledged invocations were later not found (e.g. ${lostIds[0] ?? '?'}): the client was told they happened`,
        { invocationIds: lostIds.slice(0, 200), details },
      );
    },
  };
}
