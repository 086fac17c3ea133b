// Picks the invocations worth a closer look in report.html: every op that never ended (hung),
// the ops a failed check names in its evidence, then the slowest ops that did end — bounded,
// so a run with thousands of hung clients still gives a readable report. The "why it failed"
// panel adds one example op per diagnosis group it shows, when none of the group is listed.
import type { CheckResult } from '../run-data/verdict.js';
import { invocationIdOf, pairOps, runEndMs, type PairedOp, type RunData } from '../run-data/run-data.js';

export type InvocationReason = 'hung' | 'evidence' | 'slowest' | 'example';

export interface NotableInvocation {
  pair: PairedOp;
  reason: InvocationReason;
  invocationId?: string;
  traceId?: string;
  /** Until the end, or until the run's deadline for a hung op. */
  durationMs: number;
}

export interface NotableOptions {
  maxHung?: number;
  maxEvidence?: number;
  maxSlowest?: number;
}

export interface NotableInvocations {
  list: NotableInvocation[];
  /** Hung ops in the run, including those over the bound. */
  hungTotal: number;
}

export function notableInvocations(
  run: RunData,
  checks: readonly CheckResult[],
  options: NotableOptions = {},
): NotableInvocations {
  const maxHung = options.maxHung ?? 20;
  const maxEvidence = options.maxEvidence ?? 10;
  const maxSlowest = options.maxSlowest ?? 5;
  const endMs = runEndMs(run);
  const pairs = pairOps(run.history);
  const describe = (pair: PairedOp, reason: InvocationReason): NotableInvocation =>
    describeInvocation(pair, reason, endMs);
  const hung = pairs.filter((p) => p.end === undefined);
  const list = hung.slice(0, maxHung).map((p) => describe(p, 'hung'));
  const taken = new Set(list.map((n) => n.pair.invoke.opId));

  const named = new Set(
    checks.filter((c) => c.verdict !== 'pass').flatMap((c) => c.evidence.invocationIds ?? []),
  );
  let fromEvidence = 0;
  for (const p of pairs) {
    if (fromEvidence >= maxEvidence) break;
    const id = invocationIdOf(p);
    if (id === undefined || !named.has(id) || taken.has(p.invoke.opId)) continue;
    list.push(describe(p, 'evidence'));
    taken.add(p.invoke.opId);
    fromEvidence++;
  }

  const slowest = pairs
    .filter((p) => p.end !== undefined && !taken.has(p.invoke.opId))
    .map((p) => describe(p, 'slowest'))
    .sort((a, b) => b.durationMs - a.durationMs)
    .slice(0, maxSlowest);
  list.push(...slowest);
  return { list, hungTotal: hung.length };
}

/** One op as the invocations section lists it; `endMs` is the run's end (a hung op lasts until then). */
export function describeInvocation(
  pair: PairedOp,
  reason: InvocationReason,
  endMs: number,
): NotableInvocation {
  return {
    pair,
    reason,
    invocationId: invocationIdOf(pair),
    traceId: pair.end?.traceId ?? pair.invoke.traceId,
    durationMs: (pair.end?.timeMs ?? Math.max(endMs, pair.invoke.timeMs)) - pair.invoke.timeMs,
  };
}
