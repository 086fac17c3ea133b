// Serves a declared system's own metrics under limbo's canonical names, so the checkers,
// dashboards and alerts that read `limbo_*` work on it unchanged. On each scrape of its
// /metrics it reads every running service's /metrics (bounded) and renames what the
// declaration maps, adding `node="<service>"`:
//
//   etcd-2 /metrics: etcd_server_leader_changes_seen_total 3
//     ─▶ bridge /metrics: limbo_processor_leadership_changes_total{node="etcd-2"} 3
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scrape } from '../../telemetry/prom-text.js';

export interface SignalSource {
  name: string;
  metricsUrl(): string | undefined;
}

export interface StartedSignalBridge {
  readonly metricsUrl: string;
  stop(): Promise<void>;
}

const SCRAPE_TIMEOUT_MS = 1000;

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
  const render = async (): Promise<string> => {
    const lines: string[] = [];
    for (const limbo of Object.keys(renames))
      lines.push(`# TYPE ${limbo} ${limbo.endsWith('_total') ? 'counter' : 'gauge'}`);
    const scraped = await Promise.all(
      sources().map(async (s) => {
        const url = s.metricsUrl();
        if (url === undefined) return [];
        try {
          return (await scrape(url, SCRAPE_TIMEOUT_MS)).map((sample) => ({ node: s.name, sample }));
        } catch {
          return []; // a paused or dying service: no sample this time
        }
      }),
    );
    for (const { node, sample } of scraped.flat())
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
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
