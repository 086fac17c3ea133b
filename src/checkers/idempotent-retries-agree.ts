// A retry with the same idempotency key is the same invocation: every ok answer for one key
// must carry the same invocation id and the same output.
import { pairOps, type RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';

export function idempotentRetriesAgree(): Checker {
  const name = 'idempotentRetriesAgree';
  return {
    name,
    check(run: RunData): CheckResult {
      const groups = new Map<string, { ids: Set<string>; outputs: Set<string>; n: number }>();
      const keyed = { ops: 0, ok: 0 };
      for (const p of pairOps(run.history)) {
        const req = p.invoke.request;
        if (req?.idempotencyKey !== undefined && p.invoke.kind !== 'counterGet') {
          keyed.ops++;
          if (p.end?.type === 'ok') keyed.ok++;
        }
        if (req?.idempotencyKey === undefined || p.end?.type !== 'ok') continue;
        if (p.invoke.kind === 'counterGet') continue;
        const key = `${req.path.replace(/\/send$/, '')}|${req.idempotencyKey}`;
        let g = groups.get(key);
        if (g === undefined) groups.set(key, (g = { ids: new Set(), outputs: new Set(), n: 0 }));
        g.n++;
        const id = p.end.invocationId ?? p.invoke.invocationId;
        if (id !== undefined) g.ids.add(id);
        // A send's 202 carries no output; only calls and attaches are compared by output.
        if (p.invoke.kind !== 'send' && p.end.response?.body !== undefined)
          g.outputs.add(JSON.stringify(p.end.response.body));
      }
      const repeated = [...groups.entries()].filter(([, g]) => g.n >= 2);
      if (repeated.length === 0)
        return result(
          name,
          'inconclusive',
          `no idempotency key was answered ok more than once (${keyed.ops} ops carried a key, ${keyed.ok} answered ok, over ${groups.size} keys)`,
          { details: { keyedOps: keyed.ops, keyedOk: keyed.ok, keys: groups.size } },
        );
      const bad = repeated.filter(([, g]) => g.ids.size > 1 || g.outputs.size > 1);
      const details = {
        keysWithRetries: repeated.length,
        disagreements: bad.map(([k, g]) => ({ key: k, invocationIds: [...g.ids], outputs: [...g.outputs] })),
      };
      if (bad.length === 0)
        return result(name, 'pass', `${repeated.length} retried idempotency keys agree`, { details });
      return result(name, 'fail', `${bad.length} idempotency keys got different answers`, {
        invocationIds: bad.flatMap(([, g]) => [...g.ids]),
        details,
      });
    },
  };
}
