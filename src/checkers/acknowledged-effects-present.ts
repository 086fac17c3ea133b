// Acknowledged effects all present: once the cluster acknowledged an invocation (a send
// answered 202 with its id, a call answered with its output), every later question about that
// invocation must find it. A send whose attach answers "not found", or an invocation id answered
// ok and later not found, is an effect the client was told happened and that is gone. Counter
// effects are weighed by exactlyOnce; this check covers invocations themselves.
//
// The clients' own questions come early (a send's attach right after it was accepted): a system
// that loses what it acknowledged at a failover (asynchronous replication, a new leader without
// the old one's tail) may answer them from the old leader first. So after convergence the runner
// attaches once more to every acknowledged invocation (request.final, kind attach): one the
// system now says does not exist (404, or an adapter's fail) is lost too.
import { pairOps, type RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { answerExcerpt, describeOp, ids, statusOf } from './op-answers.js';

export function acknowledgedEffectsPresent(): Checker {
  const name = 'acknowledgedEffectsPresent';
  return {
    name,
    check(run: RunData): CheckResult {
      // The history paired once: the clients' ops, and the runner's final attaches.
      const pairs = pairOps(run.history);
      const ops = pairs.filter((p) => p.invoke.request?.final !== true);
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
      const finalAttaches = pairs.filter(
        (p) => p.invoke.request?.final === true && p.invoke.kind === 'attach',
      );
      // An HTTP attach answers 404 for an invocation that does not exist; an adapter's attach says fail.
      const notFound = finalAttaches.filter(
        (p) => statusOf(p) === 404 || (p.invoke.request?.method === 'attach' && p.end?.type === 'fail'),
      );
      const lostIds = new Set(ids([...lostSends, ...vanished]));
      const lostAfter = notFound.filter((p) => {
        const id = p.invoke.invocationId ?? p.end?.invocationId;
        return id === undefined || !lostIds.has(id);
      });
      const lost = [...new Set([...lostSends, ...vanished, ...lostAfter])];
      // A not-found answer is never ok: the rest got no answer that says either way.
      const found = finalAttaches.filter((p) => p.end?.type === 'ok').length;
      const asked = {
        attached: finalAttaches.length,
        found,
        notFound: notFound.length,
        unanswered: finalAttaches.length - found - notFound.length,
      };
      const acknowledged = ops.filter((p) => p.end?.type === 'ok').length + lostSends.length;
      if (acknowledged === 0) {
        const ended = { fail: 0, info: 0, open: 0 };
        for (const p of ops) ended[p.end === undefined ? 'open' : p.end.type === 'fail' ? 'fail' : 'info']++;
        return result(
          name,
          'inconclusive',
          `nothing was acknowledged: of ${ops.length} client ops none ended ok (${ended.fail} failed, ${ended.info} unknown, ${ended.open} open)${ops.length > 0 ? `; the last answered ${answerExcerpt(ops[ops.length - 1]!)}` : ''}`,
          { details: { ops: ops.length, ...ended } },
        );
      }
      const details = {
        acknowledged,
        lost: lost.length,
        finalAttaches: asked,
        examples: lost.slice(0, 20).map((p) => describeOp(p, run)),
      };
      const after =
        asked.attached === 0
          ? ''
          : `; after convergence ${asked.attached} attached again: ${asked.found} found, ${asked.notFound} not found${asked.unanswered > 0 ? `, ${asked.unanswered} without an answer` : ''}`;
      if (lost.length === 0)
        return result(name, 'pass', `all ${acknowledged} acknowledged invocations stayed present${after}`, {
          details,
        });
      const allLost = ids(lost);
      return result(
        name,
        'fail',
        `${lost.length} acknowledged invocations were later not found (e.g. ${allLost[0] ?? '?'}): the client was told they happened${after}`,
        { invocationIds: allLost.slice(0, 200), details },
      );
    },
  };
}
