// Serves a declared system's own metrics under limbo's canonical names, so the checkers,
// dashboards and alerts that read `limbo_*` work on it unchanged. It reads every running
// service's /metrics (each read bounded, one in flight per service) every 250 ms and on each
// scrape of its own /metrics, which waits at most 120 ms for them, so a paused service never
// stalls the others; it serves the latest read of each service no older than 1 s, renaming
// what the declaration maps and adding `node="<service>"`:
//
//   etcd-2 /metrics: etcd_server_leader_changes_seen_total 3
//     ─▶ bridge /metrics: limbo_processor_leadership_changes_total{node="etcd-2"} 3
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scrape, type Sample } from '../../telemetry/prom-text.js';

export interface SignalSource {
  name: string;
  metricsUrl(): string | undefined;
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
): Promise<StartedSignalBridge> {
  const bySystemName = new Map<string, string[]>();
  for (const [limbo, own] of Object.entries(renames))
    bySystemName.set(own, [...(bySystemName.get(own) ?? []), limbo]);
  const latest = new Map<string, { atMs: number; samples: Sample[] }>();
  const inFlight = new Map<string, Promise<void>>();
  const readAll = (): Promise<void>[] =>
    sources().flatMap((s) => {
      const url = s.metricsUrl();
      if (url === undefined) return [];
      const running = inFlight.get(s.name);
      if (running !== undefined) return [running];
      const read = scrape(url, READ_TIMEOUT_MS)
        .then(
          (samples) => {
            latest.set(s.name, {
              atMs: Date.now(),
              samples: samples.filter((x) => bySystemName.has(x.name)),
            });
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
    await Promise.race([Promise.allSettled(readAll()), new Promise((r) => setTimeout(r, FRESH_WAIT_MS))]);
    const lines: string[] = [];
    for (const limbo of Object.keys(renames))
      lines.push(`# TYPE ${limbo} ${limbo.endsWith('_total') ? 'counter' : 'gauge'}`);
    const now = Date.now();
    const fresh = [...latest].filter(([, r]) => now - r.atMs <= FRESH_MS);
    for (const [node, read] of fresh)
      for (const sample of read.samples)
        for (const limbo of bySystemName.get(sample.name) ?? []) {
          const labels = { ...sample.labels, node };
          const text = Object.entries(labels)
            .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
            .join(',');
          lines.push(`${limbo}{${text}} ${sample.value}`);
        }
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
