// Amplification is a failure even when every client is answered. Resends are bounded per
// resending request: over every sliding window, a partition's resend rate divided by the
// requests that can have resent to it in the window must stay under `maxPerPendingPerSec`
// (the fixed backoff, 50 ms doubling to a 1 s cap, resends a request at most 5 times in 2 s,
// 2.5/s, and a new leader's reset of the backoff adds a few; a healthy reference run measures
// up to 3.4/s, a fixed 50 ms resend 7.3–9.3/s over an outage of 0.7 s: the bound is 5). And
// resends settle: from `settleMs` after the final heal to the deadline the counter may grow by
// at most `maxAfterSettle`. Evidence: the window, the partition, the rate and the requests it
// is divided by.
//
//   resends_total{partition}(t) ─┐ increase over [t, t+window] / window ─┐
//   resending_requests{partition}(at t)                                    ├─▶ rate per resending request
//     + increase of resent_requests_total{partition} over the window ──────┘
//
// The requests resending at the window's start plus those that began resending in it are
// every request that can have resent in it, however briefly each one did (no sample can miss
// one), and counting per partition keeps the requests of healthy partitions out of it; a
// window with one resending request is divided by two (one request's churn is no storm). A
// system without those two series is divided by all its pending requests (the maximum of
// limbo_ingress_pending_requests over the window): a weaker bound, as healthy partitions'
// requests dilute a storm on one.
import { metricNames } from '../protocol/names.js';
import { finalHealMs, runEndMs, type RunData, type SeriesSample } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { counterIncrease, groupSeries, restartsOf, scrapedInstead } from './series-math.js';

export interface ResendRateBoundedOptions {
  maxPerPendingPerSec?: number;
  windowMs?: number;
  settleMs?: number;
  maxAfterSettle?: number;
}

type Groups = ReadonlyMap<string, readonly SeriesSample[]>;

export function resendRateBounded(options: ResendRateBoundedOptions = {}): Checker {
  const name = 'resendRateBounded';
  const maxRate = options.maxPerPendingPerSec ?? 5;
  const windowMs = options.windowMs ?? 2000;
  const settleMs = options.settleMs ?? 5000;
  const maxAfterSettle = options.maxAfterSettle ?? 5;
  const resendsName = metricNames.ingressResendsTotal;
  return {
    name,
    needs: [resendsName],
    check(run: RunData): CheckResult {
      const resends = groupSeries(run.series, [resendsName]);
      if (resends.size === 0)
        return result(
          name,
          'inconclusive',
          `no samples of ${resendsName} (${scrapedInstead(run.series, [resendsName])})`,
        );
      const resending = byPartition(groupSeries(run.series, [metricNames.ingressResendingRequests]));
      const resent = byPartition(groupSeries(run.series, [metricNames.ingressResentRequestsTotal]));
      const pending = groupSeries(run.series, [metricNames.ingressPendingRequests]);
      const perRequest = resending.size > 0 && resent.size > 0;
      // A restarted ingress's counters count again from zero (even where not below the old).
      const restarts = restartsOf(run.series);
      const increase = (g: readonly SeriesSample[], from: number, to: number): number =>
        counterIncrease(g, from, to, restarts.get(g[0]?.service ?? '')) ?? 0;
      const end = runEndMs(run);
      let worst = { partition: '', rate: 0, perPending: 0, pending: 0, fromMs: 0, toMs: 0, resends: 0 };
      let total = 0;
      for (const g of resends.values()) total += increase(g, -1, end);
      for (const [partition, groups] of byPartition(resends)) {
        const times = [...new Set([...groups.values()].flatMap((g) => g.map((s) => s.tMs)))].sort(
          (a, b) => a - b,
        );
        for (const t of times) {
          const to = t + windowMs;
          if (to > end + windowMs) break;
          let inc = 0;
          for (const g of groups.values()) inc += increase(g, t, to);
          if (inc === 0) continue;
          // One resending request is judged as two: one request's churn (each table change
          // wakes it, each new epoch restarts its backoff) is no storm; one storming request
          // still shows at half its rate (10/s).
          const p = perRequest
            ? Math.max(2, resendingIn(resending.get(partition), resent.get(partition), t, to, increase))
            : Math.max(1, maxPending(pending, t, to));
          const rate = inc / (windowMs / 1000);
          if (rate / p > worst.perPending)
            worst = { partition, rate, perPending: rate / p, pending: p, fromMs: t, toMs: to, resends: inc };
        }
      }
      const heal = finalHealMs(run) ?? 0;
      let afterSettle = 0;
      const settleFrom = heal + settleMs;
      if (settleFrom < end) for (const g of resends.values()) afterSettle += increase(g, settleFrom, end);
      const per = perRequest ? 'resending' : 'pending';
      const details = {
        maxPerPendingPerSec: maxRate,
        windowMs,
        dividedBy: perRequest ? 'requests resending to the partition in the window' : 'pending requests',
        totalResends: total,
        worstWindow: { ...worst, rate: round(worst.rate), perPending: round(worst.perPending) },
        resendsAfterSettle: afterSettle,
        settleFromMs: settleFrom,
      };
      const problems = [];
      const where = worst.partition === '' ? '' : ` to partition ${worst.partition}`;
      if (worst.perPending > maxRate)
        problems.push(
          `resend storm: ${round(worst.rate)} resends/s${where} for ${worst.pending} ${per} requests (${round(worst.perPending)}/s each, bound ${maxRate}) in [${Math.round(worst.fromMs)}, ${Math.round(worst.toMs)}] ms`,
        );
      if (afterSettle > maxAfterSettle)
        problems.push(
          `${afterSettle} resends more than ${settleMs} ms after the final heal: they never settled`,
        );
      const evidence = evidenceSeries(resends, worst.fromMs, worst.toMs);
      const partition = Number(worst.partition);
      const moments = [
        ...(worst.perPending > maxRate
          ? [
              {
                fromMs: worst.fromMs,
                toMs: worst.toMs,
                what: `a resend storm, ${round(worst.perPending)} resends/s per ${per} request (bound ${maxRate})`,
                ...(worst.partition !== '' && Number.isInteger(partition) ? { partition } : {}),
              },
            ]
          : []),
        ...(afterSettle > maxAfterSettle
          ? [
              {
                fromMs: settleFrom,
                toMs: end,
                what: `${afterSettle} resends after the system should have settled`,
              },
            ]
          : []),
      ];
      if (problems.length > 0)
        return result(name, 'fail', problems.join('; '), { details, series: evidence, moments });
      return result(
        name,
        'pass',
        `${total} resends, at most ${round(worst.perPending)}/s per ${per} request; settled after the heal`,
        { details },
      );
    },
  };
}

/** Series grouped by their partition label ('' for none), each partition's by series key. */
function byPartition(groups: Groups): Map<string, Map<string, readonly SeriesSample[]>> {
  const out = new Map<string, Map<string, readonly SeriesSample[]>>();
  for (const [key, g] of groups) {
    const partition = g[0]?.labels.partition ?? '';
    let m = out.get(partition);
    if (m === undefined) out.set(partition, (m = new Map<string, readonly SeriesSample[]>()));
    m.set(key, g);
  }
  return out;
}

/**
 * Every request that can have resent in [fromMs, toMs]: per service, the resending gauge at
 * its last sample at or before fromMs plus the resent counter's increase from that sample on.
 */
function resendingIn(
  gauges: Groups | undefined,
  counters: Groups | undefined,
  fromMs: number,
  toMs: number,
  increase: (g: readonly SeriesSample[], from: number, to: number) => number,
): number {
  let sum = 0;
  for (const g of gauges?.values() ?? []) {
    let at = 0;
    for (const s of g) {
      if (s.tMs > fromMs) break;
      at = s.value;
    }
    sum += at;
  }
  for (const g of counters?.values() ?? []) sum += increase(g, fromMs, toMs);
  return sum;
}

function maxPending(groups: Groups, fromMs: number, toMs: number): number {
  // Sum across series of each one's maximum inside the window (a conservative denominator).
  let sum = 0;
  for (const g of groups.values()) {
    let m = 0;
    let before = 0;
    for (const s of g) {
      if (s.tMs <= fromMs) before = s.value;
      else if (s.tMs <= toMs) m = Math.max(m, s.value);
    }
    sum += Math.max(m, before);
  }
  return sum;
}

function evidenceSeries(
  groups: ReadonlyMap<string, readonly SeriesSample[]>,
  fromMs: number,
  toMs: number,
): SeriesSample[] {
  return [...groups.values()]
    .flatMap((g) => g.filter((s) => s.tMs >= fromMs && s.tMs <= toMs).slice(0, 20))
    .slice(0, 100);
}

const round = (x: number): number => Math.round(x * 10) / 10;
