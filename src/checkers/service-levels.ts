// Harm bounded as users feel it: a target's service levels held against every fault of the run.
// A green that only means "every op ended eventually" lets a failover that takes twice as long,
// or a cluster that stays slow after the heal, pass; these bounds name the ops and faults that
// break them. Three levels, each per fault window:
//
//   failover   an op met by a fault on a processor (kill, pause, restart, transfer) ends
//              within `failoverMs` of the later of its invoke and the fault, net of up to
//              `latencyCrossings` × the latency a latency fault it also met adds.
//   tail       ops invoked while a fault is in have a p99 latency within `p99DuringFaultMs`,
//              net of what the fault itself imposes: the time a blocking fault (a cut, a
//              black hole, a stopped log) held the op is the fault's, as is up to
//              `latencyCrossings` × the latency a latency fault adds, and a processor fault's
//              wait up to `failoverMs` (judged above).
//   recovery   after a heal, with no other fault in, every op live at the heal or invoked
//              within `recoveryAfterHealMs` of it ends within `recoveryAfterHealMs` of the
//              later of the heal and its invoke.
//
// Every measure is of harm: an op's normal time — the p99 latency of the ops answered before
// the first fault, when at least 20 were — comes off first (a busy machine is slow with or
// without faults).
//
// The bounds come from the target (TargetProfile.slo): the reference cluster's are derived
// from its failure detection, lease and backoff settings (targets/reference.ts).
import { runEndMs, type FaultWindow, type PairedOp, type RunData } from '../run-data/run-data.js';
import { notApplicable, result, type Checker, type CheckResult } from './checker.js';
import { hurtsProcessor } from './failover-time-bounded.js';
import { clientOps, describeOp, ids, quantile, windowLabel } from './op-answers.js';

export interface ServiceLevels {
  /** An op met by a processor fault ends within this of the later of its invoke and the fault. */
  failoverMs: number;
  /** p99 latency of ops invoked while a fault is in, net of what the fault imposes. */
  p99DuringFaultMs: number;
  /** After a heal, ops end within this of the later of the heal and their invoke. */
  recoveryAfterHealMs: number;
  /** How many times in sequence one op may cross a slowed link (default 3). */
  latencyCrossings?: number;
  /**
   * How long a peer that went silent without closing its connections (paused, or cut off by
   * a partition that holds or drops its bytes) takes to be found dead — a keepalive's time and
   * timeout: added to `failoverMs` for such faults (default 0).
   */
  silentPeerDetectionMs?: number;
  /** Why these numbers, for the report and the docs. */
  basis?: string;
}

/** Faults that stop a path until healed: the time they hold an op is theirs. */
const BLOCKING = new Set([
  'timeout',
  'link-down',
  'reset_peer',
  'limit_data',
  'isolate',
  'kill',
  'pause',
  'restart',
  'clients-before-processors',
  // The log refusing appends: what it holds waits for the heal.
  'log-append-errors',
  // The log's disk failing writes: appends fail until the partition recovers from its file.
  'log-write-errors',
  'data-loss-restart',
]);

/** The latency a latency fault adds per crossing of its link, if it is one. */
function addedLatencyMs(w: FaultWindow): number | undefined {
  if (w.fault === 'follower-lag') return Number(w.details?.['latencyMs'] ?? 0);
  // A slow disk: each durable write late by its delay.
  if (w.fault === 'slow-fsync')
    return Number((w.details?.['params'] as { delayMs?: unknown } | undefined)?.delayMs ?? 0);
  if (w.fault !== 'latency') return undefined;
  const a = (w.details?.['attributes'] ?? {}) as { latency?: unknown; jitter?: unknown };
  return Number(a.latency ?? 0) + Number(a.jitter ?? 0);
}

/** Fewer ops invoked in a window than this: its p99 is not judged (one slow op is not a tail). */
const MIN_TAIL_OPS = 20;

export function serviceLevels(slo: ServiceLevels): Checker {
  const name = 'serviceLevels';
  const crossings = slo.latencyCrossings ?? 3;
  // A peer that goes silent keeps its connections open: the failover waits for keepalive too.
  const silent = (w: FaultWindow): boolean =>
    w.fault === 'pause' || (w.fault === 'isolate' && w.details?.['how'] !== 'refuse');
  const failoverBound = (w: FaultWindow): number =>
    slo.failoverMs + (silent(w) ? (slo.silentPeerDetectionMs ?? 0) : 0);
  return {
    name,
    check(run: RunData): CheckResult {
      if (run.faults.length === 0)
        return notApplicable(
          name,
          'the run injected no fault (the service levels hold during and after faults)',
        );
      const ops = clientOps(run);
      const end = runEndMs(run);
      const endOf = (p: PairedOp): number => p.end?.timeMs ?? end;
      const healOf = (w: FaultWindow): number => w.healedAtMs ?? end;
      const overlap = (p: PairedOp, w: FaultWindow): number =>
        Math.max(0, Math.min(endOf(p), healOf(w)) - Math.max(p.invoke.timeMs, w.injectedAtMs));
      const activeAt = (t: number, except?: FaultWindow): boolean =>
        run.faults.some((w) => w !== except && w.injectedAtMs <= t && healOf(w) > t);
      // An op's normal time is not harm: the p99 of the ops answered before the first fault
      // (on a busy machine every op is slower, faults or not) comes off every measure.
      const firstFault = Math.min(...run.faults.map((w) => w.injectedAtMs));
      const calm = ops
        .filter((p) => p.end?.type === 'ok' && p.end.timeMs < firstFault)
        .map((p) => endOf(p) - p.invoke.timeMs)
        .sort((a, b) => a - b);
      const baseline = calm.length >= MIN_TAIL_OPS ? quantile(calm, 0.99) : 0;

      const breaks: { level: string; w: FaultWindow; op: PairedOp; ms: number }[] = [];
      const perWindow = [];
      for (const w of run.faults) {
        const processor = hurtsProcessor(w);
        const row: Record<string, unknown> = { window: windowLabel(w) };
        // failover
        if (processor) {
          let worst = 0;
          for (const p of ops) {
            if (p.invoke.timeMs > healOf(w) || endOf(p) < w.injectedAtMs) continue;
            // A latency fault it also met slows its way to the new leader: that part is the
            // latency fault's (a lagging follower that takes over catches up through it).
            let slowed = 0;
            for (const o of run.faults) {
              const added = addedLatencyMs(o);
              if (added !== undefined) slowed += Math.min(overlap(p, o), crossings * added);
            }
            const waited = endOf(p) - Math.max(p.invoke.timeMs, w.injectedAtMs) - slowed - baseline;
            worst = Math.max(worst, waited);
            if (waited > failoverBound(w)) breaks.push({ level: 'failover', w, op: p, ms: waited });
          }
          row['failoverWorstMs'] = Math.round(worst);
        }
        // tail during the fault, net of what every fault the op met imposed
        const invoked = ops.filter((p) => p.invoke.timeMs >= w.injectedAtMs && p.invoke.timeMs <= healOf(w));
        if (!processor && invoked.length >= MIN_TAIL_OPS) {
          const net = invoked.map((p) => {
            let imposed = 0;
            for (const o of run.faults) {
              const held = overlap(p, o);
              if (held === 0) continue;
              const added = addedLatencyMs(o);
              if (added !== undefined) imposed += Math.min(held, crossings * added);
              else if (hurtsProcessor(o)) imposed += Math.min(held, slo.failoverMs);
              else if (BLOCKING.has(o.fault)) imposed += held;
            }
            return { p, ms: Math.max(0, endOf(p) - p.invoke.timeMs - imposed - baseline) };
          });
          const sorted = net.map((n) => n.ms).sort((a, b) => a - b);
          const p99 = quantile(sorted, 0.99);
          row['p99NetMs'] = Math.round(p99);
          row['invoked'] = invoked.length;
          if (p99 > slo.p99DuringFaultMs)
            for (const n of net)
              if (n.ms > slo.p99DuringFaultMs) breaks.push({ level: 'tail', w, op: n.p, ms: n.ms });
        }
        // recovery after the heal, where no other fault is in
        if (w.healedAtMs !== undefined) {
          const heal = w.healedAtMs;
          let worst = 0;
          for (const p of ops) {
            const live = p.invoke.timeMs <= heal && endOf(p) >= heal;
            const soon = p.invoke.timeMs > heal && p.invoke.timeMs <= heal + slo.recoveryAfterHealMs;
            if (!live && !soon) continue;
            const from = Math.max(heal, p.invoke.timeMs);
            // Another fault in meanwhile owns this op's wait.
            if (
              activeAt(from, w) ||
              run.faults.some((o) => o.injectedAtMs > from && o.injectedAtMs < endOf(p))
            )
              continue;
            const took = endOf(p) - from - baseline;
            worst = Math.max(worst, took);
            if (took > slo.recoveryAfterHealMs) breaks.push({ level: 'recovery', w, op: p, ms: took });
          }
          row['recoveryWorstMs'] = Math.round(worst);
        }
        perWindow.push(row);
      }
      const details = { slo, baselineP99Ms: Math.round(baseline), perWindow };
      if (breaks.length === 0)
        return result(
          name,
          'pass',
          `every fault within failover ${slo.failoverMs} ms, p99 ${slo.p99DuringFaultMs} ms during, recovery ${slo.recoveryAfterHealMs} ms after the heal`,
          { details },
        );
      const bound = {
        failover: slo.failoverMs,
        tail: slo.p99DuringFaultMs,
        recovery: slo.recoveryAfterHealMs,
      };
      const groups = new Map<string, typeof breaks>();
      for (const b of breaks) {
        const key = `${b.level} ${windowLabel(b.w)}`;
        const g = groups.get(key);
        if (g === undefined) groups.set(key, [b]);
        else g.push(b);
      }
      const summary = [...groups.entries()]
        .map(([key, g]) => {
          const worst = g.reduce((a, b) => (b.ms > a.ms ? b : a));
          const level = worst.level as keyof typeof bound;
          const over = level === 'failover' ? failoverBound(worst.w) : bound[level];
          return `${key}: ${g.length} ops over ${over} ms (worst ${Math.round(worst.ms)} ms, ${worst.op.end?.invocationId ?? worst.op.invoke.invocationId ?? `op ${worst.op.invoke.opId}`})`;
        })
        .join('; ');
      return result(name, 'fail', summary, {
        invocationIds: ids(breaks.map((b) => b.op)).slice(0, 200),
        details: {
          ...details,
          examples: breaks.slice(0, 20).map((b) => ({
            level: b.level,
            window: windowLabel(b.w),
            ms: Math.round(b.ms),
            ...describeOp(b.op, run),
          })),
        },
      });
    },
  };
}
