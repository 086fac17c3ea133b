// What `limbo up` starts and stops (the command, cli/up.ts, parses its flags, prints what this
// started and waits for a signal): the target with a proxy per link through the testbed, a
// trace backend, a Prometheus and a Grafana where they can run, and .limbo/up.json describing it.
//
//   target (every service + a Toxiproxy proxy per link) ─┐
//   OTLP: --otlp-endpoint, else (docker) Jaeger, else   ─┤
//         the built-in receiver (spans.jsonl)            ├─▶ up.json ─▶ RunningUp ─▶ stop(): cleanup
//   Prometheus: (docker) its image, else the binary ─────┤
//   Grafana: (docker) its image, dashboards provisioned ─┘
// up.json tells users and tools where everything is: the ingress URLs, the Toxiproxy API
// and its proxy per link, every link's listen address (where its dialer is pointed) and
// upstream, every service's allocated ports (a declared target) and metrics URL, and the
// Prometheus / Grafana / trace URLs — null, with the reason in `notStarted`, for what could
// not be started here.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prometheusAvailable, startPrometheus } from '../observe/prometheus-server.js';
import { createCleanup } from '../runtime/cleanup.js';
import type { StartedTarget, Target, Topology } from '../targets/target.js';
import { UsageError } from '../util/errors.js';
import { startTestbed } from './testbed.js';

export interface UpFile {
  target: string;
  runtime: 'local' | 'docker';
  pid: number;
  ingressUrls: string[];
  toxiproxy: { api: string; proxies: Record<string, string> };
  /** Every link (`client->ingress`, `*->etcd-2`, …): its proxy's listen address and the upstream it forwards to. */
  links: Record<string, UpLink>;
  /** Each service's named ports as allocated for this run (a declared target; else empty). */
  ports: Record<string, Record<string, number>>;
  services: Record<string, { role: string; pid: number | null; metrics: string | null }>;
  metrics: Record<string, string>;
  prometheus: string | null;
  grafana: string | null;
  /** `ui`: the trace backend's UI (Jaeger), when one was started. */
  traces: { otlpEndpoint: string; spansFile: string | null; ui: string | null };
  /** Why each of prometheus, grafana, traces was not started (or fell back), when it was not. */
  notStarted: Record<string, string>;
}

export interface UpLink {
  proxy: string;
  /** host:port the dialer is given (`{{link:FROM->TO}}`). */
  listen: string;
  /** host:port of the service behind it. */
  upstream: string;
  enabled: boolean;
}

export interface UpOptions {
  target: Target;
  runtime: 'local' | 'docker';
  topology: Topology;
  /** Where up.json goes, and under it this start's run directory (logs, data, spans). */
  dir: string;
  /** `on` fails (UsageError) when no Prometheus could be started; `auto` notes why not. */
  prometheus: 'auto' | 'on' | 'off';
  /** A user's OTLP/HTTP endpoint for traces instead of a trace backend or the built-in receiver. */
  otlpEndpoint?: string;
  toxiproxyUrl?: string;
  /** The services' environment (startTestbed). */
  env: NodeJS.ProcessEnv;
  /** The environment the docker observability containers are started with. */
  imagesEnv: NodeJS.ProcessEnv;
  /** The alert rules every Prometheus loads. */
  rulesFile: string;
  /** Called once the trace backend is settled, just before the target starts. */
  onStarting?: () => void;
}

/** A started `limbo up`: what up.json holds, where it is, the target; stop() undoes it all. */
export interface RunningUp {
  readonly up: UpFile;
  /** The up.json path (removed by stop()). */
  readonly file: string;
  readonly started: StartedTarget;
  stop(): Promise<void>;
}

/** Every link's proxy as the Toxiproxy API describes it now (a link whose proxy is gone is left out). */
export async function linksOf(
  api: string,
  proxies: Readonly<Record<string, string>>,
): Promise<Record<string, UpLink>> {
  const res = await fetch(`${api.replace(/\/$/, '')}/proxies`, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`${api}/proxies answered ${res.status}`);
  const all = (await res.json()) as Record<string, { listen?: string; upstream?: string; enabled?: boolean }>;
  const links: Record<string, UpLink> = {};
  for (const [link, proxy] of Object.entries(proxies)) {
    const p = all[proxy];
    if (p?.listen === undefined || p.upstream === undefined) continue;
    links[link] = { proxy, listen: p.listen, upstream: p.upstream, enabled: p.enabled ?? true };
  }
  return links;
}

/**
 * Starts everything `limbo up` runs and writes up.json. On a failure whatever had started is
 * stopped before the error is thrown.
 */
export async function startUp(o: UpOptions): Promise<RunningUp> {
  const runDir = join(o.dir, `up-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(runDir, { recursive: true });
  const upFile = join(o.dir, 'up.json');
  const cleanup = createCleanup();
  const notStarted: Record<string, string> = {};
  const observability =
    o.runtime === 'docker' ? await import('../runtime/docker-observability.js') : undefined;
  const imagesEnv = o.imagesEnv;
  try {
    let otlpEndpoint = o.otlpEndpoint;
    let spansFile: string | null = null;
    let tracesUi: string | null = null;
    if (otlpEndpoint === undefined && observability !== undefined) {
      const jaeger = await observability.startTracesContainer({ runDir, env: imagesEnv });
      if (jaeger.ok) {
        cleanup.add('jaeger', () => jaeger.value.stop());
        otlpEndpoint = jaeger.value.otlpEndpoint;
        tracesUi = jaeger.value.url;
      } else notStarted['traces'] = `${jaeger.reason}; spans go to the built-in receiver`;
    } else if (otlpEndpoint === undefined)
      notStarted['traces'] =
        'a trace backend container runs only with --runtime docker; spans go to the built-in receiver';
    o.onStarting?.();
    const testbed = await startTestbed({
      target: o.target,
      topology: o.topology,
      runDir,
      trace: otlpEndpoint !== undefined ? { otlpEndpoint } : true,
      env: o.env,
      ...(o.toxiproxyUrl !== undefined ? { toxiproxyUrl: o.toxiproxyUrl } : {}),
      cleanup,
    });
    const started = testbed.target;
    otlpEndpoint = testbed.spans.otlpEndpoint ?? '';
    spansFile = testbed.spans.spansFile ?? null;
    const metrics: Record<string, string> = {};
    for (const [name, url] of Object.entries(testbed.metricsEndpoints()))
      if (url !== undefined) metrics[name] = url;
    const services: UpFile['services'] = {};
    for (const s of started.services.values())
      services[s.name] = { role: s.role, pid: s.pid() ?? null, metrics: s.metricsUrl() ?? null };
    let prometheusUrl: string | null = null;
    const rules = o.rulesFile;
    const scrapeTargets = Object.entries(metrics).map(([job, url]) => ({ job, url }));
    if (o.prometheus !== 'off' && observability !== undefined) {
      const p = await observability.startPrometheusContainer({
        runDir,
        env: imagesEnv,
        targets: scrapeTargets,
        scrapeIntervalMs: 1000,
        rulesFile: rules,
      });
      if (p.ok) {
        cleanup.add('prometheus container', () => p.value.stop());
        prometheusUrl = p.value.url;
      } else notStarted['prometheus'] = p.reason;
    }
    if (o.prometheus !== 'off' && prometheusUrl === null) {
      if (prometheusAvailable()) {
        const prometheus = await startPrometheus({
          targets: scrapeTargets,
          scrapeIntervalMs: 1000,
          rulesFiles: [rules],
        });
        cleanup.add('prometheus', () => prometheus.stop());
        prometheusUrl = prometheus.url;
        if (notStarted['prometheus'] !== undefined)
          notStarted['prometheus'] += '; the host prometheus binary runs instead';
      } else if (o.prometheus === 'on') {
        throw new UsageError(
          `--prometheus on: no prometheus binary on PATH${notStarted['prometheus'] ? ` and ${notStarted['prometheus']}` : ''}`,
        );
      } else {
        notStarted['prometheus'] = [notStarted['prometheus'], 'no prometheus binary on PATH']
          .filter((x) => x !== undefined)
          .join('; ');
      }
    } else if (o.prometheus === 'off') notStarted['prometheus'] = '--prometheus off';
    let grafanaUrl: string | null = null;
    if (observability === undefined)
      notStarted['grafana'] =
        'Grafana runs as a container only with --runtime docker (see dashboards/README.md to import the dashboards)';
    else if (prometheusUrl === null) notStarted['grafana'] = 'no Prometheus to read from';
    else {
      const g = await observability.startGrafanaContainer({
        runDir,
        env: imagesEnv,
        prometheusUrl,
        dashboardsDir: fileURLToPath(new URL('../../../dashboards', import.meta.url)),
      });
      if (g.ok) {
        cleanup.add('grafana', () => g.value.stop());
        grafanaUrl = g.value.url;
      } else notStarted['grafana'] = g.reason;
    }
    const up: UpFile = {
      target: started.name,
      runtime: o.runtime,
      pid: process.pid,
      ingressUrls: [...started.ingressUrls],
      toxiproxy: { api: started.toxiproxyUrl, proxies: { ...started.links } },
      links: await linksOf(started.toxiproxyUrl, started.links),
      ports: Object.fromEntries(Object.entries(started.ports ?? {}).map(([s, p]) => [s, { ...p }])),
      services,
      metrics,
      prometheus: prometheusUrl,
      grafana: grafanaUrl,
      traces: { otlpEndpoint, spansFile, ui: tracesUi },
      notStarted,
    };
    writeFileSync(upFile, JSON.stringify(up, null, 2) + '\n');
    cleanup.add('up.json', () => Promise.resolve(rmSync(upFile, { force: true })));
    return { up, file: upFile, started, stop: () => cleanup.runAll() };
  } catch (err) {
    await cleanup.runAll();
    throw err;
  }
}
