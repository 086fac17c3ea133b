// Serves a declared system's own metrics under limbo's canonical names, so the checkers,
// dashboards and alerts that read `limbo_*` work on it unchanged. It reads every running
// service's /metrics (each read bounded, one in flight per service) every 250 ms and on each
// scrape of its own /metrics, which waits at most 120 ms for them, so a paused service never
// stalls the others; it serves the latest read of each service no older than 1 s, renaming
// what the declaration maps and adding `node="<service>"`:
//
//   etcd-2 /metrics: etcd_server_leader_changes_seen_total 3
//     ─▶ bridge /metrics: limbo_processor_leadership_changes_total{node="etcd-2"} 3
//
// A system without Prometheus gets its signals the same way from JSON endpoints (`json`: a
// URL per service and a path into its answer, read in the same rounds as /metrics), and from
// samples limbo derives itself (`derived`: the leadership probe's is-leader and changes,
// leadership-signals.ts), served beside the renamed ones:
//
//   nats-2 /jsz: {"meta_cluster":{"leader":"nats-2"}}, path meta_cluster.leader, equals {{name}}
//     ─▶ bridge /metrics: limbo_processor_is_leader{node="nats-2",partition="0"} 1
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scrape, type Sample } from '../../telemetry/prom-text.js';
import { metricNames } from '../../protocol/names.js';
import { jsonNumber, type JsonNumberRule } from './json-path.js';

export interface SignalSource {
  name: string;
  metricsUrl(): string | undefined;
}

/** One limbo signal read from a JSON endpoint of each service that has it. */
export interface JsonSignal {
  /** The limbo signal's name. */
  signal: string;
  /** The URL for this service, or undefined when the service has none (its template does not fill). */
  url(service: string): string | undefined;
  path: string;
  /** For this service (templates in `equals` filled as its own). */
  rule(service: string): JsonNumberRule;
  labels?: Readonly<Record<string, string>>;
}

/** Samples limbo derives itself, already labelled; refresh() reads anew (the bridge waits briefly). */
export interface DerivedSignals {
  samples(): readonly Sample[];
  refresh(): Promise<unknown>;
}

export interface SignalBridgeOptions {
  json?: readonly JsonSignal[];
  derived?: readonly DerivedSignals[];
}

export interface StartedSignalBridge {
  readonly metricsUrl: string;
  stop(): Promise<void>;
}

const READ_EVERY_MS = 250;
const READ_TIMEOUT_MS = 1000;
const FRESH_MS = 1000;
/** How long a scrape of the bridge waits for fresh reads (below the runner's 200 ms scrape timeout). */
const FRESH_WAIT_MS = 120;

const escapeLabel = (v: string): string =>
  v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** `renames`: limbo name → the system's metric name. */
export async function startSignalBridge(
  sources: () => readonly SignalSource[],
  renames: Readonly<Record<string, string>>,
  options: SignalBridgeOptions = {},
): Promise<StartedSignalBridge> {
  const json = options.json ?? [];
  const derived = options.derived ?? [];
  const bySystemName = new Map<string, string[]>();
  for (const [limbo, own] of Object.entries(renames))
    bySystemName.set(own, [...(bySystemName.get(own) ?? []), limbo]);
  const latest = new Map<string, { atMs: number; samples: Sample[] }>();
  /** This service's JSON signals, each URL fetched once; a value that is no number gives no sample. */
  const readJson = async (service: string, reads: readonly JsonSignal[]): Promise<Sample[]> => {
    const answers = new Map<string, Promise<unknown>>();
    const get = (url: string): Promise<unknown> => {
      let a = answers.get(url);
      if (a === undefined)
        answers.set(
          url,
          (a = fetch(url, { signal: AbortSignal.timeout(READ_TIMEOUT_MS) }).then((r) => {
            if (!r.ok) throw new Error(`HTTP ${r.status}`);
            return r.json();
          })),
        );
      return a;
    };
    const out: Sample[] = [];
    for (const j of reads) {
      // An endpoint that fails gives no sample of its signals; the service's others stand.
      const answer = await get(j.url(service)!).catch(() => undefined);
      const value = answer === undefined ? undefined : jsonNumber(answer, j.path, j.rule(service));
      if (value === undefined) continue;
      // One group leads everything: an is-leader without a partition is partition 0's.
      const partition: Record<string, string> =
        j.signal === metricNames.processorIsLeader ? { partition: '0' } : {};
      out.push({ name: j.signal, labels: { ...partition, ...j.labels }, value });
    }
    return out;
  };
  const inFlight = new Map<string, Promise<void>>();
  const readAll = (): Promise<void>[] =>
    sources().flatMap((s) => {
      const url = bySystemName.size > 0 ? s.metricsUrl() : undefined;
      const reads = json.filter((j) => j.url(s.name) !== undefined);
      if (url === undefined && reads.length === 0) return [];
      const running = inFlight.get(s.name);
      if (running !== undefined) return [running];
      const read = Promise.all([
        url === undefined
          ? []
          : scrape(url, READ_TIMEOUT_MS).then((samples) =>
              samples.flatMap((x) => (bySystemName.get(x.name) ?? []).map((name) => ({ ...x, name }))),
            ),
        readJson(s.name, reads),
      ])
        .then(
          ([renamed, fromJson]) => {
            latest.set(s.name, { atMs: Date.now(), samples: [...renamed, ...fromJson] });
          },
          () => undefined, // a paused or dying service: its last read ages out
        )
        .finally(() => inFlight.delete(s.name));
      inFlight.set(s.name, read);
      return [read];
    });
  const timer = setInterval(() => void readAll(), READ_EVERY_MS);
  timer.unref();
  void readAll();
  /** A scrape gets fresh reads where they come quickly; a stalled service's last read stands in. */
  const render = async (): Promise<string> => {
    await Promise.race([
      Promise.allSettled([...readAll(), ...derived.map((d) => d.refresh())]),
      new Promise((r) => setTimeout(r, FRESH_WAIT_MS)),
    ]);
    const byName = new Map<string, string[]>();
    const add = (name: string, labels: Record<string, string>, value: number): void => {
      const text = Object.entries(labels)
        .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
        .join(',');
      byName.set(name, [...(byName.get(name) ?? []), `${name}{${text}} ${value}`]);
    };
    for (const limbo of [...Object.keys(renames), ...json.map((j) => j.signal)]) byName.set(limbo, []);
    const now = Date.now();
    const fresh = [...latest].filter(([, r]) => now - r.atMs <= FRESH_MS);
    for (const [node, read] of fresh)
      for (const sample of read.samples) add(sample.name, { ...sample.labels, node }, sample.value);
    for (const d of derived) for (const sample of d.samples()) add(sample.name, sample.labels, sample.value);
    const lines: string[] = [];
    for (const [name, samples] of byName)
      lines.push(`# TYPE ${name} ${name.endsWith('_total') ? 'counter' : 'gauge'}`, ...samples);
    return lines.join('\n') + '\n';
  };
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    render().then(
      (body) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body),
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    metricsUrl: `http://127.0.0.1:${port}/metrics`,
    stop: () =>
      new Promise<void>((resolve) => {
        clearInterval(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
