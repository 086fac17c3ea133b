// Amplification is a failure even when every client is answered. Resends are bounded per
// pending request: over every sliding window, the ingress's resend rate divided by the
// requests pending in it must stay under `maxPerPendingPerSec` (the fixed backoff, 50 ms
// doubling to a 1 s cap, resends a request about 3 times a second at most averaged over 2 s).
// And resends settle: from `settleMs` after the final heal to the deadline the counter may
// grow by at most `maxAfterSettle`. Evidence: the window, the rate, the pending count.
//
//   resends_total(t) ─┐ increase over [t, t+window] / window ─┐
//   pending(t) ───────┴──────── max over the window (≥ 1) ────┴─▶ rate per pending request
import { metricNames } from '../protocol/names.js';
import { finalHealMs, runEndMs, type RunData, type SeriesSample } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { counterIncrease, groupSeries } from './series-math.js';

export interface ResendRateBoundedOptions {
  maxPerPendingPerSec?: number;
  windowMs?: number;
  settleMs?: number;
  maxAfterSettle?: number;
}

export function resendRateBounded(options: ResendRateBoundedOptions = {}): Checker {
  const name = 'resendRateBounded';
  const maxRate = options.maxPerPendingPerSec ?? 6;
  const windowMs = options.windowMs ?? 2000;
  const settleMs = options.settleMs ?? 5000;
  const maxAfterSettle = options.maxAfterSettle ?? 5;
  const resendsName = metricNames.ingressResendsTotal;
  const pendingName = metricNames.ingressPendingRequests;
  return {
    name,
    needs: [resendsName],
    check(run: RunData): CheckResult {
      const resends = groupSeries(run.series, [resendsName]);
      const pending = groupSeries(run.series, [pendingName]);
      if (resends.size === 0) return result(name, 'inconclusive', `no samples of ${resendsName}`);
      const end = runEndMs(run);
      const times = [...new Set([...resends.values()].flatMap((g) => g.map((s) => s.tMs)))].sort(
        (a, b) => a - b,
      );
      let worst = { rate: 0, perPending: 0, pending: 0, fromMs: 0, toMs: 0, resends: 0 };
      let total = 0;
      for (const g of resends.values()) total += counterIncrease(g, -1, end) ?? 0;
      for (const t of times) {
        const to = t + windowMs;
        if (to > end + windowMs) break;
        let inc = 0;
        for (const g of resends.values()) inc += counterIncrease(g, t, to) ?? 0;
        if (inc === 0) continue;
        const p = Math.max(1, maxPending(pending, t, to));
        const rate = inc / (windowMs / 1000);
        if (rate / p > worst.perPending)
          worst = { rate, perPending: rate / p, pending: p, fromMs: t, toMs: to, resends: inc };
      }
      const heal = finalHealMs(run) ?? 0;
      let afterSettle = 0;
      const settleFrom = heal + settleMs;
      if (settleFrom < end)
        for (const g of resends.values()) afterSettle += counterIncrease(g, settleFrom, end) ?? 0;
      const details = {
        maxPerPendingPerSec: maxRate,
        windowMs,
        totalResends: total,
        worstWindow: { ...worst, rate: round(worst.rate), perPending: round(worst.perPending) },
        resendsAfterSettle: afterSettle,
        settleFromMs: settleFrom,
      };
      const problems = [];
      if (worst.perPending > maxRate)
        problems.push(
          `resend storm: ${round(worst.rate)} resends/s for ${worst.pending} pending requests (${round(worst.perPending)}/s each, bound ${maxRate}) in [${Math.round(worst.fromMs)}, ${Math.round(worst.toMs)}] ms`,
        );
      if (afterSettle > maxAfterSettle)
        problems.push(
          `${afterSettle} resends more than ${settleMs} ms after the final heal: they never settled`,
        );
      const evidence = evidenceSeries(resends, worst.fromMs, worst.toMs);
      if (problems.length > 0)
        return result(name, 'fail', problems.join('; '), { details, series: evidence });
      return result(
        name,
        'pass',
        `${total} resends, at most ${round(worst.perPending)}/s per pending request; settled after the heal`,
        { details },
      );
    },
  };
}

function maxPending(
  groups: ReadonlyMap<string, readonly SeriesSample[]>,
  fromMs: number,
  toMs: number,
): number {
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
