// Exactly-once effects on the keyed counter. Adds are grouped into logical effects by
// idempotency key (a client retry of the same key is one effect); an effect is applied (some
// op ok), not applied (every op failed), or unknown (info, or open at the deadline). The final
// value read after convergence must be the ok deltas plus some subset of the unknown ones:
// less is a lost effect, more (or an unreachable sum) a duplicated one.
import { pairOps, type PairedOp, type RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { answerExcerpt } from './op-answers.js';

interface Effect {
  key: string;
  delta: number;
  status: 'ok' | 'unknown' | 'failed';
  invocationIds: string[];
}

const SUBSET_SUM_LIMIT = 1_000_000;

export function exactlyOnce(): Checker {
  const name = 'exactlyOnce';
  return {
    name,
    check(run: RunData): CheckResult {
      const pairs = pairOps(run.history);
      const effects = effectsOf(pairs.filter((p) => p.invoke.kind === 'counterAdd'));
      if (effects.length === 0) return result(name, 'inconclusive', 'no counter adds were recorded');
      const keys = [...new Set(effects.map((e) => e.key))].sort();
      const problems: string[] = [];
      const unread: { key: string; why: string }[] = [];
      const perKey: Record<string, unknown> = {};
      const ids: string[] = [];
      for (const key of keys) {
        const mine = effects.filter((e) => e.key === key);
        const final = finalValue(pairs, key, mine.length > 0 ? lastEndMs(pairs, key) : 0);
        const okSum = sum(mine.filter((e) => e.status === 'ok').map((e) => e.delta));
        const unknown = mine.filter((e) => e.status === 'unknown');
        const unknownSum = sum(unknown.map((e) => e.delta));
        perKey[key] = { final, okSum, unknownSum, unknownEffects: unknown.length };
        if (final === undefined) {
          unread.push({ key, why: whyUnread(pairs, key, lastEndMs(pairs, key)) });
          continue;
        }
        const extra = final - okSum;
        let problem: string | undefined;
        if (extra < 0) problem = `counter ${key} = ${final} < ${okSum} acknowledged: an effect was lost`;
        else if (extra > unknownSum)
          problem = `counter ${key} = ${final} > ${okSum} acknowledged + ${unknownSum} unknown: an effect was applied twice`;
        else if (
          !subsetSumReachable(
            unknown.map((e) => e.delta),
            extra,
          )
        )
          problem = `counter ${key} = ${final}: no subset of the unknown adds makes up ${extra}`;
        if (problem !== undefined) {
          problems.push(problem);
          for (const e of mine) ids.push(...e.invocationIds);
        }
      }
      const details = { perKey, unreadKeys: unread.map((u) => u.key), unreadBecause: unread };
      if (problems.length > 0)
        return result(name, 'fail', problems.join('; '), { invocationIds: ids.slice(0, 500), details });
      if (unread.length > 0)
        return result(
          name,
          'inconclusive',
          `no final read of counter(s) ${unread.map((u) => `${u.key} (${u.why})`).join('; ')}`,
          { details },
        );
      return result(name, 'pass', `${keys.length} counters hold exactly their effects`, { details });
    },
  };
}

function effectsOf(adds: readonly PairedOp[]): Effect[] {
  const byEffect = new Map<string, PairedOp[]>();
  for (const p of adds) {
    const req = p.invoke.request;
    if (req?.counterKey === undefined || req.delta === undefined) continue;
    const id =
      req.idempotencyKey !== undefined ? `k:${req.counterKey}:${req.idempotencyKey}` : `op:${p.invoke.opId}`;
    let g = byEffect.get(id);
    if (g === undefined) byEffect.set(id, (g = []));
    g.push(p);
  }
  return [...byEffect.values()].map((ops) => {
    const first = ops[0]!.invoke.request!;
    const status = ops.some((p) => p.end?.type === 'ok')
      ? 'ok'
      : ops.some((p) => p.end === undefined || p.end.type === 'info')
        ? 'unknown'
        : 'failed';
    const invocationIds = ops
      .map((p) => p.end?.invocationId ?? p.invoke.invocationId)
      .filter((x): x is string => !!x);
    return {
      key: first.counterKey!,
      delta: first.delta!,
      status,
      invocationIds: [...new Set(invocationIds)],
    };
  });
}

function lastEndMs(pairs: readonly PairedOp[], key: string): number {
  let t = 0;
  for (const p of pairs) {
    if (p.invoke.kind !== 'counterAdd' || p.invoke.request?.counterKey !== key) continue;
    t = Math.max(t, p.end?.timeMs ?? Number.POSITIVE_INFINITY);
  }
  return t;
}

/** The last ok read of the key invoked after every add to it ended (or marked final). */
function finalValue(pairs: readonly PairedOp[], key: string, afterMs: number): number | undefined {
  let best: PairedOp | undefined;
  for (const p of pairs) {
    if (p.invoke.kind !== 'counterGet' || p.invoke.request?.counterKey !== key) continue;
    if (p.end?.type !== 'ok' || p.end.response?.value === undefined) continue;
    if (p.invoke.request.final !== true && p.invoke.timeMs < afterMs) continue;
    if (best === undefined || p.invoke.timeMs >= best.invoke.timeMs) best = p;
  }
  return best?.end?.response?.value;
}

/**
 * Why a key has no final value, from the client history: what its last read after the adds
 * (the runner's final read first) answered, or that no read came after them.
 */
function whyUnread(pairs: readonly PairedOp[], key: string, afterMs: number): string {
  const reads = pairs.filter((p) => p.invoke.kind === 'counterGet' && p.invoke.request?.counterKey === key);
  const finals = reads.filter((p) => p.invoke.request?.final === true);
  const late = reads.filter((p) => p.invoke.timeMs >= afterMs);
  const last = (finals.length > 0 ? finals : late).at(-1);
  if (last !== undefined)
    return `${last.invoke.request?.final === true ? 'the final read' : 'the last read after the adds'} answered ${answerExcerpt(last)}${last.end?.type === 'ok' ? ', no counter value in it' : ''}`;
  if (!Number.isFinite(afterMs)) return 'an add on it was still open at the deadline';
  return reads.length === 0
    ? 'it was never read'
    : `no read of it after its last add ended at ${Math.round(afterMs)} ms`;
}

/** Whether some subset of `values` sums to `target`; non-integer or huge inputs only get the range check. */
export function subsetSumReachable(values: readonly number[], target: number): boolean {
  if (target === 0) return true;
  const total = sum(values);
  if (
    !values.every((v) => Number.isInteger(v) && v > 0) ||
    !Number.isInteger(target) ||
    total > SUBSET_SUM_LIMIT
  )
    return target >= 0 && target <= total;
  const reachable = new Uint8Array(total + 1);
  reachable[0] = 1;
  let max = 0;
  for (const v of values) {
    for (let s = max; s >= 0; s--) if (reachable[s] === 1) reachable[s + v] = 1;
    max += v;
    if (reachable[target] === 1) return true;
  }
  return reachable[target] === 1;
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
