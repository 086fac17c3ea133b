// A fault that met no traffic proves nothing. Each fault is judged on its own evidence: the
// bytes and connections its own proxies counted while it was in (a link fault: the faulted
// proxy in the directions its toxic hurts; a process fault: every link into and out of the
// service, including the second before the inject — did it hold work?; a fault that refuses
// dials: the dials that came right after its heal). Never on the run's
// traffic as a whole: a cut on a link that carried nothing while clients were busy elsewhere
// is exactly the false green this check is for. Any fault that met nothing makes the run
// inconclusive, and the summary names each one with what its proxies counted.
import {
  pairOps,
  runEndMs,
  type FaultEvidence,
  type FaultWindow,
  type RunData,
} from '../run-data/run-data.js';
import { toxiproxyMetricNames } from '../protocol/names.js';
import { notApplicable, result, type Checker, type CheckResult } from './checker.js';
import { groupSeries, counterIncrease } from './series-math.js';
import type { SeriesSample } from '../run-data/run-data.js';

export const proxyByteMetrics = [
  toxiproxyMetricNames.receivedBytesTotal,
  toxiproxyMetricNames.sentBytesTotal,
];

/** How far before a process fault its links' traffic still says it held work. */
export const heldWorkLookbackMs = 1000;

interface WindowVerdict {
  fault: string;
  target: string;
  met: boolean;
  /** What it met, in words: `0 bytes, 0 connections opened on proxy a->b (both directions)`. */
  evidence: string;
  /** The counts behind it. */
  counted: Record<string, unknown>;
}

/** True when the evidence shows the fault met traffic of its own. */
export function evidenceMet(e: FaultEvidence): boolean {
  return e.bytes > 0 || (e.connectionsOpened ?? 0) > 0 || (e.connectionsCut ?? 0) > 0;
}

/** One line: what the fault met on its proxies. */
export function describeEvidence(
  e: Pick<FaultEvidence, 'proxies' | 'directions' | 'bytes' | 'connectionsOpened' | 'connectionsCut'>,
): string {
  const parts = [`${e.bytes} bytes`];
  if (e.connectionsOpened !== undefined) parts.push(`${e.connectionsOpened} connections opened`);
  if ((e.connectionsCut ?? 0) > 0) parts.push(`${e.connectionsCut} connections cut`);
  const on =
    e.proxies.length === 0
      ? 'no proxy (nothing of it runs through Toxiproxy)'
      : `${e.proxies.length === 1 ? 'proxy' : 'proxies'} ${e.proxies.join(', ')}`;
  const dirs = e.directions.length >= 2 ? 'both directions' : e.directions.join(', ');
  return `${parts.join(', ')} on ${on} (${dirs})`;
}

export function faultsHitTraffic(): Checker {
  const name = 'faultsHitTraffic';
  return {
    name,
    check(run: RunData): CheckResult {
      if (run.faults.length === 0)
        return notApplicable(name, 'the run injected no fault (nothing had to meet traffic)');
      const end = runEndMs(run);
      const bytesByProxy = proxyByteSeries(run.series);
      const ops = pairOps(run.history);
      const opensByProxy = proxyOpenSeries(run.series);
      const verdicts = run.faults.map((w) => judge(w, end, bytesByProxy, opensByProxy, ops));
      const idle = verdicts.filter((v) => !v.met);
      const details = { windows: verdicts };
      if (idle.length > 0)
        return result(
          name,
          'inconclusive',
          `${idle.length} of ${verdicts.length} fault(s) met no traffic of their own: ${idle
            .map((v) => `${v.fault}@${v.target} (${v.evidence})`)
            .join('; ')}`,
          { details },
        );
      return result(name, 'pass', `each of ${verdicts.length} fault(s) met traffic on its own proxies`, {
        details,
      });
    },
  };
}

/** Per proxy and direction, the scraped byte counters (the fallback where a fault has no counts). */
function proxyByteSeries(series: readonly SeriesSample[]): Map<string, SeriesSample[][]> {
  const out = new Map<string, SeriesSample[][]>();
  for (const g of groupSeries(series, [toxiproxyMetricNames.receivedBytesTotal]).values()) {
    const proxy = g[0]?.labels['proxy'];
    if (proxy === undefined) continue;
    const list = out.get(proxy);
    if (list === undefined) out.set(proxy, [g]);
    else list.push(g);
  }
  return out;
}

function scrapedBytes(
  bytesByProxy: ReadonlyMap<string, SeriesSample[][]>,
  proxies: readonly string[],
  directions: readonly string[],
  fromMs: number,
  toMs: number,
): number {
  let bytes = 0;
  for (const p of proxies)
    for (const g of bytesByProxy.get(p) ?? []) {
      const d = g[0]?.labels['direction'];
      if (d !== undefined && !directions.includes(d)) continue;
      bytes += counterIncrease(g, fromMs, toMs) ?? 0;
    }
  return bytes;
}

/** How soon after a refusing fault's heal a dial still shows a dialer it refused. */
export const redialWindowMs = 1000;

/** Faults that refuse dials (a disabled proxy): the dials themselves leave no count. */
function refuses(w: FaultWindow): boolean {
  return w.fault === 'link-down' || (w.fault === 'isolate' && w.details?.['how'] === 'refuse');
}

/** Per proxy, the scraped `opened` connection counters (the embedded server's). */
function proxyOpenSeries(series: readonly SeriesSample[]): Map<string, SeriesSample[][]> {
  const out = new Map<string, SeriesSample[][]>();
  for (const g of groupSeries(series, [toxiproxyMetricNames.connectionsTotal]).values()) {
    const proxy = g[0]?.labels['proxy'];
    if (proxy === undefined || g[0]?.labels['event'] !== 'opened') continue;
    const list = out.get(proxy);
    if (list === undefined) out.set(proxy, [g]);
    else list.push(g);
  }
  return out;
}

function scrapedOpens(
  opensByProxy: ReadonlyMap<string, SeriesSample[][]>,
  proxies: readonly string[],
  fromMs: number,
  toMs: number,
): number {
  let n = 0;
  for (const p of proxies)
    for (const g of opensByProxy.get(p) ?? []) n += counterIncrease(g, fromMs, toMs) ?? 0;
  return n;
}

function judge(
  w: FaultWindow,
  end: number,
  bytesByProxy: ReadonlyMap<string, SeriesSample[][]>,
  opensByProxy: ReadonlyMap<string, SeriesSample[][]>,
  ops: ReturnType<typeof pairOps>,
): WindowVerdict {
  const to = w.healedAtMs ?? end;
  const base = { fault: w.fault, target: w.target };
  const e = w.evidence;
  if (e?.hook !== undefined) {
    // A fault inside a service: its hook counted the work it acted on; that alone decides.
    if (e.hookHits === undefined)
      return {
        ...base,
        met: false,
        evidence: `hook ${e.hook}: its count could not be read (${e.hookHitsUnavailable ?? 'no reading'})`,
        counted: { ...e },
      };
    return {
      ...base,
      met: e.hookHits > 0,
      evidence: `hook ${e.hook} acted on ${e.hookHits} ${e.hookHits === 1 ? 'request' : 'requests'}`,
      counted: { ...e },
    };
  }
  if (e !== undefined && e.unavailable === undefined) {
    // A process fault also held work if its links carried bytes in the second before it.
    const before =
      e.look === 'around'
        ? scrapedBytes(
            bytesByProxy,
            e.proxies,
            e.directions,
            w.injectedAtMs - heldWorkLookbackMs,
            w.injectedAtMs,
          )
        : 0;
    const counted = { ...e, ...(e.look === 'around' ? { bytesInSecondBefore: before } : {}) };
    if (evidenceMet(e) || before > 0)
      return { ...base, met: true, evidence: describeWith(e, before), counted };
    if (refuses(w) && w.healedAtMs !== undefined) {
      // A disabled proxy cannot see the dials it refuses; a dialer that was refused comes
      // back as soon as the proxy listens again: dials right after the heal are that demand.
      const dials = scrapedOpens(opensByProxy, e.proxies, w.healedAtMs, w.healedAtMs + redialWindowMs);
      if (dials > 0)
        return {
          ...base,
          met: true,
          evidence: `${describeEvidence(e)}; ${dials} connections dialled within ${redialWindowMs} ms of the heal (refused while it was in)`,
          counted: { ...counted, dialsRightAfterHeal: dials },
        };
    }
    if (e.proxies.length === 0) {
      // Nothing of it runs through a proxy: a leader with ops in flight is what it had.
      const inFlight = w.leader === true ? liveAt(ops, w.injectedAtMs, end) : 0;
      if (inFlight > 0)
        return {
          ...base,
          met: true,
          evidence: `led a partition with ${inFlight} ops in flight (no proxy of its own)`,
          counted: { ...counted, opsInFlightAtInject: inFlight },
        };
    }
    return { ...base, met: false, evidence: describeWith(e, before), counted };
  }
  // No counts of its own (a fault without a plan, or counters that could not be read): the
  // scraped byte counters of the proxies it names, over its window.
  const proxies = e?.proxies ?? w.affects.filter((a) => bytesByProxy.has(a));
  const directions = e?.directions ?? ['upstream', 'downstream'];
  const bytes = scrapedBytes(bytesByProxy, proxies, directions, w.injectedAtMs, to);
  const why = e?.unavailable !== undefined ? `; no counts of its own: ${e.unavailable}` : '';
  return {
    ...base,
    met: bytes > 0,
    evidence: `${describeEvidence({ proxies, directions, bytes })}, as scraped${why}`,
    counted: {
      proxies,
      directions,
      bytes,
      scraped: true,
      ...(why !== '' ? { unavailable: e?.unavailable } : {}),
    },
  };
}

function describeWith(e: FaultEvidence, bytesBefore: number): string {
  const text = describeEvidence(e);
  return e.look === 'around' ? `${text}; ${bytesBefore} bytes in the second before` : text;
}

/** Ops open at `atMs`: invoked by then, not ended before it. */
function liveAt(ops: ReturnType<typeof pairOps>, atMs: number, end: number): number {
  return ops.filter((p) => p.invoke.timeMs <= atMs && (p.end?.timeMs ?? end) >= atMs).length;
}
