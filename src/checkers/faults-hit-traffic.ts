// A fault that met no traffic proves nothing: every fault window must overlap a live client
// op or see bytes move through one of the proxies it affects (toxiproxy_proxy_*_bytes_total
// scraped from the Toxiproxy server's /metrics). Otherwise the run is inconclusive, never green.
import { pairOps, runEndMs, type FaultWindow, type RunData } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { groupSeries, counterIncrease } from './series-math.js';

export const proxyByteMetrics = ['toxiproxy_proxy_received_bytes_total', 'toxiproxy_proxy_sent_bytes_total'];

export function faultsHitTraffic(): Checker {
  const name = 'faultsHitTraffic';
  return {
    name,
    check(run: RunData): CheckResult {
      if (run.faults.length === 0) return result(name, 'inconclusive', 'no fault was injected');
      const end = runEndMs(run);
      const ops = pairOps(run.history);
      const byteSeries = [...groupSeries(run.series, proxyByteMetrics).values()];
      const idle: FaultWindow[] = [];
      const perWindow = [];
      for (const w of run.faults) {
        const to = w.healedAtMs ?? end;
        const liveOps = ops.filter(
          (p) => p.invoke.timeMs <= to && (p.end?.timeMs ?? end) >= w.injectedAtMs,
        ).length;
        let bytes = 0;
        for (const g of byteSeries) {
          const proxy = g[0]?.labels['proxy'];
          if (proxy === undefined || !w.affects.includes(proxy)) continue;
          bytes += counterIncrease(g, w.injectedAtMs, to) ?? 0;
        }
        perWindow.push({ fault: w.fault, target: w.target, liveOps, proxyBytes: bytes });
        if (liveOps === 0 && bytes === 0) idle.push(w);
      }
      const details = { windows: perWindow };
      if (idle.length > 0)
        return result(
          name,
          'inconclusive',
          `fault(s) met no traffic: ${idle.map((w) => `${w.fault}@${w.target}`).join(', ')}`,
          { details },
        );
      return result(name, 'pass', `all ${run.faults.length} faults met live traffic`, { details });
    },
  };
}
