// The product's question: was any client left hanging? Every op must end within
// `withinMsAfterHeal` of the final heal (or of its own invoke, if it started later). An op
// still open at the deadline is hung, and so is one the client itself gave up on
// (client_timeout): the server never answered it. The verdict lists each hung invocation id.
// The runner's final reads (request.final) are not client traffic and are left out.
import { finalHealMs, invocationIdOf, pairOps, runEndMs, type RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';

export interface NoClientLeftHangingOptions {
  withinMsAfterHeal?: number;
  /** Count client-side timeouts as answered (default false: a timeout is a hang). */
  allowClientTimeouts?: boolean;
}

interface Hung {
  opId: number;
  kind: string;
  invocationId?: string;
  traceId?: string;
  invokedAtMs: number;
  endedAtMs?: number;
  reason: 'open_at_deadline' | 'ended_late' | 'client_timeout';
  request?: unknown;
}

const MAX_LISTED = 200;

export function noClientLeftHanging(options: NoClientLeftHangingOptions = {}): Checker {
  const withinMs = options.withinMsAfterHeal ?? 5000;
  const name = 'noClientLeftHanging';
  return {
    name,
    check(run: RunData): CheckResult {
      // The runner's final counter reads support exactlyOnce; they are not client traffic.
      const pairs = pairOps(run.history).filter((p) => p.invoke.request?.final !== true);
      if (pairs.length === 0) return result(name, 'inconclusive', 'no client ops were recorded');
      const heal = finalHealMs(run) ?? 0;
      const deadline = runEndMs(run);
      const hung: Hung[] = [];
      for (const p of pairs) {
        const base = {
          opId: p.invoke.opId,
          kind: p.invoke.kind,
          invocationId: invocationIdOf(p),
          traceId: p.end?.traceId ?? p.invoke.traceId,
          invokedAtMs: p.invoke.timeMs,
          request: p.invoke.request,
        };
        if (p.end === undefined) {
          hung.push({ ...base, reason: 'open_at_deadline' });
          continue;
        }
        const bound = Math.max(heal, p.invoke.timeMs) + withinMs;
        if (p.end.timeMs > bound) hung.push({ ...base, endedAtMs: p.end.timeMs, reason: 'ended_late' });
        else if (
          p.end.type === 'info' &&
          p.end.error?.code === 'client_timeout' &&
          !options.allowClientTimeouts
        )
          hung.push({ ...base, endedAtMs: p.end.timeMs, reason: 'client_timeout' });
      }
      const ids = hung.map((h) => h.invocationId).filter((id): id is string => id !== undefined);
      const traceIds = hung.map((h) => h.traceId).filter((id): id is string => id !== undefined);
      const details = {
        ops: pairs.length,
        hung: hung.length,
        healedAtMs: heal,
        deadlineMs: deadline,
        withinMsAfterHeal: withinMs,
        hungOps: hung.slice(0, MAX_LISTED),
      };
      if (hung.length === 0)
        return result(name, 'pass', `all ${pairs.length} ops ended within ${withinMs} ms of the heal`, {
          details,
        });
      const unnamed = hung.length - ids.length;
      return result(
        name,
        'fail',
        `${hung.length} of ${pairs.length} ops left hanging` +
          (unnamed > 0 ? ` (${unnamed} without a known invocation id)` : ''),
        {
          invocationIds: ids,
          traceIds,
          details: {
            ...details,
            ...(ids[0] !== undefined
              ? { hint: `follow one with: npx limbo trace ${ids[0]} --run <this run directory>` }
              : {}),
          },
        },
      );
    },
  };
}
