// What `limbo up --runtime docker` adds beside the services when the engine has the images
// (nothing is pulled: there may be no registry): Prometheus scraping every service, Grafana
// with limbo's dashboards provisioned from dashboards/provisioning, and Jaeger all-in-one as
// the OTLP trace backend. All on the host network, each server bound to 127.0.0.1 on a free
// port. An absent image is not an error: the caller gets the reason and says so.
//
//   image present? ─no─▶ { reason }
//                  └yes─▶ startContainer (ready: the server's own start log line) ─▶ { url, … }
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileSdGroups, prometheusConfig, type PrometheusTarget } from '../observe/prometheus-server.js';
import type { ReadyInfo } from '../launch/ready.js';
import { dockerClient, imageExists } from './docker-engine.js';
import { dockerImages } from './docker-images.js';
import { freePort, freePorts } from '../launch/free-ports.js';
import { startContainer, type StartedContainer } from './docker.js';

export interface ObservabilityOptions {
  runDir: string;
  runId?: string;
  /** Image names (LIMBO_PROMETHEUS_IMAGE, LIMBO_GRAFANA_IMAGE, LIMBO_TRACES_IMAGE); default process.env. */
  env?: NodeJS.ProcessEnv;
  readyTimeoutMs?: number;
}

export interface StartedBackend {
  readonly url: string;
  readonly image: string;
  readonly container: StartedContainer;
  stop(): Promise<void>;
}

export type Maybe<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Why `image` cannot be used here, or undefined when the engine has it. */
async function missing(image: string): Promise<string | undefined> {
  return (await imageExists(await dockerClient(), image))
    ? undefined
    : `image ${image} is not present in the Docker engine (nothing is pulled; load or build it, or name another)`;
}

function readyOn(pattern: RegExp, role: string, addresses: Record<string, string>) {
  return (line: string): ReadyInfo | undefined =>
    pattern.test(line) ? { role, node: role, pid: 0, addresses } : undefined;
}

async function backend(
  image: string,
  start: (image: string) => Promise<{ url: string; container: StartedContainer }>,
): Promise<Maybe<StartedBackend>> {
  const reason = await missing(image);
  if (reason !== undefined) return { ok: false, reason };
  const { url, container } = await start(image);
  return { ok: true, value: { url, image, container, stop: () => container.stop(2000) } };
}

const PROMETHEUS_READY = /Server is ready to receive web requests/;

/** Prometheus scraping `targets`; `rulesFile` (a host path) is mounted and loaded. */
export async function startPrometheusContainer(
  options: ObservabilityOptions & {
    targets: readonly PrometheusTarget[];
    scrapeIntervalMs: number;
    rulesFile?: string;
  },
): Promise<Maybe<StartedBackend>> {
  return backend(dockerImages(options.env).prometheus, async (image) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const dir = join(options.runDir, 'prometheus');
    mkdirSync(dir, { recursive: true });
    const rules = options.rulesFile !== undefined ? ['/etc/limbo/alerts.yml'] : [];
    // Targets by file-based discovery, as for the host binary (a mounted file, written once).
    writeFileSync(join(dir, 'targets.json'), JSON.stringify(fileSdGroups(options.targets), null, 2), {
      mode: 0o644,
    });
    writeFileSync(
      join(dir, 'prometheus.yml'),
      JSON.stringify(prometheusConfig('/etc/limbo/targets.json', options.scrapeIntervalMs, rules), null, 2),
      { mode: 0o644 },
    );
    const container = await startContainer({
      name: 'prometheus',
      image,
      runDir: options.runDir,
      ...(options.runId !== undefined ? { runId: options.runId } : {}),
      command: [
        '--config.file=/etc/limbo/prometheus.yml',
        `--web.listen-address=127.0.0.1:${port}`,
        '--storage.tsdb.path=/prometheus',
      ],
      mounts: [
        { source: resolve(dir, 'prometheus.yml'), target: '/etc/limbo/prometheus.yml', readOnly: true },
        { source: resolve(dir, 'targets.json'), target: '/etc/limbo/targets.json', readOnly: true },
        ...(options.rulesFile !== undefined
          ? [{ source: resolve(options.rulesFile), target: '/etc/limbo/alerts.yml', readOnly: true }]
          : []),
      ],
      readyLog: PROMETHEUS_READY,
      matchReady: readyOn(PROMETHEUS_READY, 'prometheus', { http: url }),
      readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
    });
    return { url, container };
  });
}

const GRAFANA_READY = /HTTP Server Listen/;

/** Grafana with dashboards/provisioning (data source → `prometheusUrl`, dashboards from `dashboardsDir`). */
export async function startGrafanaContainer(
  options: ObservabilityOptions & { prometheusUrl: string; dashboardsDir: string },
): Promise<Maybe<StartedBackend>> {
  return backend(dockerImages(options.env).grafana, async (image) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const dashboards = resolve(options.dashboardsDir);
    const container = await startContainer({
      name: 'grafana',
      image,
      runDir: options.runDir,
      ...(options.runId !== undefined ? { runId: options.runId } : {}),
      env: {
        GF_SERVER_HTTP_ADDR: '127.0.0.1',
        GF_SERVER_HTTP_PORT: String(port),
        GF_PATHS_PROVISIONING: '/etc/limbo/provisioning',
        GF_AUTH_ANONYMOUS_ENABLED: 'true',
        GF_AUTH_ANONYMOUS_ORG_ROLE: 'Viewer',
        // Read by dashboards/provisioning/*.yml.
        LIMBO_DASHBOARDS_DIR: '/etc/limbo/dashboards',
        LIMBO_PROMETHEUS_URL: options.prometheusUrl,
      },
      mounts: [
        { source: join(dashboards, 'provisioning'), target: '/etc/limbo/provisioning', readOnly: true },
        { source: dashboards, target: '/etc/limbo/dashboards', readOnly: true },
      ],
      readyLog: GRAFANA_READY,
      matchReady: readyOn(GRAFANA_READY, 'grafana', { http: url }),
      readyTimeoutMs: options.readyTimeoutMs ?? 90_000,
    });
    return { url, container };
  });
}

const JAEGER_READY = /Health Check state change.*ready|Query server started/;

export interface StartedTraces extends StartedBackend {
  /** Where services send spans (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly otlpEndpoint: string;
}

/** Jaeger all-in-one: OTLP/HTTP in, its UI at `url`; every listener on 127.0.0.1. */
export async function startTracesContainer(options: ObservabilityOptions): Promise<Maybe<StartedTraces>> {
  let otlpEndpoint = '';
  const started = await backend(dockerImages(options.env).traces, async (image) => {
    const [ui, otlpHttp, otlpGrpc, queryGrpc, admin, collectorHttp, collectorGrpc] = await freePorts(7);
    const url = `http://127.0.0.1:${ui}`;
    otlpEndpoint = `http://127.0.0.1:${otlpHttp}`;
    const hp = (port: number | undefined): string => `127.0.0.1:${port}`;
    const container = await startContainer({
      name: 'jaeger',
      image,
      runDir: options.runDir,
      ...(options.runId !== undefined ? { runId: options.runId } : {}),
      env: {
        COLLECTOR_OTLP_ENABLED: 'true',
        COLLECTOR_OTLP_HTTP_HOST_PORT: hp(otlpHttp),
        COLLECTOR_OTLP_GRPC_HOST_PORT: hp(otlpGrpc),
        QUERY_HTTP_SERVER_HOST_PORT: hp(ui),
        QUERY_GRPC_SERVER_HOST_PORT: hp(queryGrpc),
        ADMIN_HTTP_HOST_PORT: hp(admin),
        COLLECTOR_HTTP_SERVER_HOST_PORT: hp(collectorHttp),
        COLLECTOR_GRPC_SERVER_HOST_PORT: hp(collectorGrpc),
      },
      readyLog: JAEGER_READY,
      matchReady: readyOn(JAEGER_READY, 'jaeger', { http: url, otlp: otlpEndpoint }),
      readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
    });
    return { url, container };
  });
  return started.ok ? { ok: true, value: { ...started.value, otlpEndpoint } } : started;
}
