// What proves a fault landed: each fault says which proxies must have met traffic while it
// was in (its plan), and the scheduler reads those proxies' counters from the Toxiproxy
// server's /metrics just before the inject, just after it and just before the heal. The
// difference is the fault's own evidence — bytes read in the directions it hurts, connections
// dialled into it, connections it cut — never the run's traffic as a whole, so a cut on a
// link that carried nothing is seen as such (faultsHitTraffic makes that run inconclusive).
//
//   counters(before) ─inject─ counters(in) ─── window ─── counters(out) ─heal─
//      cut = closed(in) − closed(before)      bytes, opened = out − in
import { toxiproxyMetricNames } from '../protocol/names.js';
import type { FaultEvidence } from '../run-data/run-data.js';

export type Direction = 'upstream' | 'downstream';
export const bothDirections: readonly Direction[] = ['upstream', 'downstream'];

/**
 * What must have met traffic for a fault to count: a link fault's own proxies (in the
 * directions its toxic hurts), a process fault's links (every proxy that leads into or out
 * of the service, both directions) — `look: 'around'` adds the second before the inject: a
 * process held work if its links carried bytes just before it was stopped.
 */
export interface EvidencePlan {
  proxies: string[];
  directions: readonly Direction[];
  look?: 'window' | 'around';
  /**
   * A fault inside a service (a fault hook): how much work it acted on so far, read just before
   * its heal (the hook's own count; 0 means it met nothing, whatever the proxies carried).
   */
  hits?: { hook: string; read: () => Promise<number> };
}

/** One proxy's counters at one moment (bytes read per direction; connections where known). */
export interface ProxyCounter {
  upstream: number;
  downstream: number;
  opened?: number;
  closed?: number;
}

export type ProxyCounters = ReadonlyMap<string, ProxyCounter>;

/** Reads every proxy's counters now (the runner gives one that scrapes Toxiproxy's /metrics). */
export type ProxyCounterReader = () => Promise<ProxyCounters>;

/** The counters of a parsed /metrics page (the real server's byte counters; limbo's connection counters). */
export function proxyCountersOf(
  samples: readonly { name: string; labels: Record<string, string>; value: number }[],
): Map<string, ProxyCounter> {
  const out = new Map<string, ProxyCounter>();
  const of = (proxy: string): ProxyCounter => {
    let c = out.get(proxy);
    if (c === undefined) out.set(proxy, (c = { upstream: 0, downstream: 0 }));
    return c;
  };
  for (const s of samples) {
    const proxy = s.labels['proxy'];
    if (proxy === undefined) continue;
    if (s.name === toxiproxyMetricNames.receivedBytesTotal) {
      const d = s.labels['direction'];
      if (d === 'upstream' || d === 'downstream') of(proxy)[d] += s.value;
    } else if (s.name === toxiproxyMetricNames.connectionsTotal) {
      const c = of(proxy);
      // A dial whose upstream was down was a dial all the same.
      if (s.labels['event'] === 'opened' || s.labels['event'] === 'upstream_unreachable')
        c.opened = (c.opened ?? 0) + s.value;
      else if (s.labels['event'] === 'closed') c.closed = (c.closed ?? 0) + s.value;
    }
  }
  return out;
}

const grown = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined ? undefined : Math.max(0, b - a);

/**
 * The evidence of one fault from its plan and three readings: `before` (just before the
 * inject), `inAt` (just after it) and `outAt` (just before the heal). A reading that failed is
 * undefined; then the evidence says so and the check falls back to the scraped series.
 */
export function evidenceOf(
  plan: EvidencePlan,
  before: ProxyCounters | undefined,
  inAt: ProxyCounters | undefined,
  outAt: ProxyCounters | undefined,
  unavailable?: string,
): FaultEvidence {
  const base: FaultEvidence = {
    proxies: [...plan.proxies],
    directions: [...plan.directions],
    bytes: 0,
    ...(plan.look === 'around' ? { look: 'around' as const } : {}),
  };
  if (inAt === undefined || outAt === undefined)
    return { ...base, unavailable: unavailable ?? 'the proxies’ counters could not be read' };
  let bytes = 0;
  // A server that counts connections (the embedded one) counts a proxy never dialled as 0.
  const countsConnections = [...outAt.values()].some((c) => c.opened !== undefined);
  let opened: number | undefined = countsConnections ? 0 : undefined;
  let cut: number | undefined = countsConnections && before !== undefined ? 0 : undefined;
  const add = (sum: number | undefined, n: number | undefined): number | undefined =>
    n === undefined ? sum : (sum ?? 0) + n;
  for (const p of plan.proxies) {
    const a = inAt.get(p);
    const b = outAt.get(p);
    if (b !== undefined) for (const d of plan.directions) bytes += Math.max(0, b[d] - (a?.[d] ?? 0));
    opened = add(opened, grown(a?.opened ?? (b?.opened !== undefined ? 0 : undefined), b?.opened));
    const c0 = before?.get(p);
    if (before !== undefined)
      cut = add(cut, grown(c0?.closed ?? (a?.closed !== undefined ? 0 : undefined), a?.closed));
  }
  return {
    ...base,
    bytes,
    ...(opened !== undefined ? { connectionsOpened: opened } : {}),
    ...(cut !== undefined ? { connectionsCut: cut } : {}),
  };
}

/** A link's two ends (`from->to`; `*` dials for everyone), or undefined for another name. */
export function linkEnds(name: string): { from: string; to: string } | undefined {
  const arrow = name.indexOf('->');
  return arrow < 0 ? undefined : { from: name.slice(0, arrow), to: name.slice(arrow + 2) };
}

/** Whether a link's end is `service` (with one ingress the links say `ingress`, not `ingress-1`). */
export function endIs(end: string, service: string): boolean {
  return end === service || end === service.replace(/-\d+$/, '');
}

/** The proxies of every link that leads into or out of `service`. */
export function proxiesTouching(links: Readonly<Record<string, string>>, service: string): string[] {
  const out = new Set<string>();
  for (const [name, proxy] of Object.entries(links)) {
    const ends = linkEnds(name);
    if (ends !== undefined && (endIs(ends.from, service) || endIs(ends.to, service))) out.add(proxy);
  }
  return [...out].sort();
}
