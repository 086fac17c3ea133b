// Every key touched becomes free again after the heal: a keyed service runs one invocation at
// a time per key, so an invocation that never resumes holds its key and every later call on it
// waits. For each counter key the run touched, some op on that key invoked after the final heal
// (the runner's first final read of the key counts; the ones it asks again after a failed read,
// to give exactlyOnce a value, do not: a key still held then is held) must have been answered
// ok. A key with ops after the heal and none answered is held; a key nobody asked after the
// heal is inconclusive.
import { finalHealMs, pairOps, type RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { ids } from './op-answers.js';

export function keysFreeAfterHeal(): Checker {
  const name = 'keysFreeAfterHeal';
  return {
    name,
    check(run: RunData): CheckResult {
      const firstFinal = new Set<string>();
      const ops = pairOps(run.history).filter((p) => {
        const key = p.invoke.request?.counterKey;
        if (key === undefined) return false;
        if (p.invoke.request?.final !== true) return true;
        if (firstFinal.has(key)) return false;
        firstFinal.add(key);
        return true;
      });
      const keys = [...new Set(ops.map((p) => p.invoke.request!.counterKey!))].sort();
      if (keys.length === 0) return result(name, 'inconclusive', 'no keyed ops were recorded');
      const heal = finalHealMs(run) ?? 0;
      const held: { key: string; opsAfterHeal: number; ids: string[] }[] = [];
      const unasked: string[] = [];
      for (const key of keys) {
        const after = ops.filter((p) => p.invoke.request!.counterKey === key && p.invoke.timeMs >= heal);
        if (after.length === 0) unasked.push(key);
        else if (!after.some((p) => p.end?.type === 'ok'))
          held.push({
            key,
            opsAfterHeal: after.length,
            ids: ids(ops.filter((p) => p.invoke.request!.counterKey === key && p.end?.type !== 'ok')),
          });
      }
      const details = { keys: keys.length, healedAtMs: heal, held, unasked };
      if (held.length > 0)
        return result(
          name,
          'fail',
          held
            .map((h) => `key ${h.key} still held after the heal: ${h.opsAfterHeal} ops on it, none answered`)
            .join('; '),
          { invocationIds: held.flatMap((h) => h.ids).slice(0, 200), details },
        );
      if (unasked.length > 0) {
        const lastOp = (key: string): number =>
          Math.max(...ops.filter((p) => p.invoke.request!.counterKey === key).map((p) => p.invoke.timeMs));
        return result(
          name,
          'inconclusive',
          `no op invoked after the final heal at ${Math.round(heal)} ms on key(s) ${unasked
            .slice(0, 10)
            .map((k) => `${k} (last invoked at ${Math.round(lastOp(k))} ms)`)
            .join(', ')}${unasked.length > 10 ? ` and ${unasked.length - 10} more` : ''}`,
          { details },
        );
      }
      return result(name, 'pass', `all ${keys.length} keys answered after the heal`, { details });
    },
  };
}
