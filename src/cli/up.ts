// `limbo up`: starts a topology and keeps it up until Ctrl-C / SIGTERM, then cleans up.
//
//   target (every service + a Toxiproxy proxy per link) ─┐
//   OTLP: --otlp-endpoint, else (docker) Jaeger, else   ─┤
//         the built-in receiver (spans.jsonl)            ├─▶ .limbo/up.json ─▶ wait for a signal ─▶ cleanup
//   Prometheus: (docker) its image, else the binary ─────┤
//   Grafana: (docker) its image, dashboards provisioned ─┘
// up.json tells users and tools where everything is: the ingress URLs, the Toxiproxy API
// and its proxy per link, every service's metrics URL and the Prometheus / Grafana / trace
// URLs — null, with the reason in `notStarted`, for what could not be started here.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import { createCleanup } from '../runtime/cleanup.js';
import type { RuntimeChoice } from '../runtime/service-runtime.js';
import { chooseRuntime, dockerRunOptions } from './docker-options.js';
import { startTestbed } from '../runner/testbed.js';
import { resolveTarget } from '../targets/registry.js';
import { prometheusAvailable, startPrometheus } from '../observe/prometheus-server.js';
import { formatHelp, parseOptions, type OptionSpecs } from '../util/options.js';
import { UsageError } from '../util/errors.js';
import { waitForStopSignal } from '../util/signals.js';
import { runtimeOption, targetOption } from './common-options.js';
import { alertRulesFile } from './run-prometheus-choice.js';
import { commandSummaries } from './command-summaries.js';

const options = {
  target: targetOption,
  runtime: runtimeOption,
  processors: { type: 'int', default: 3, min: 1, max: 16, description: 'processor nodes' },
  partitions: { type: 'int', default: 4, min: 1, max: 256, description: 'partitions' },
  dir: { type: 'string', default: '.limbo', description: 'where up.json, logs and data go' },
  prometheus: {
    type: 'enum',
    values: ['auto', 'on', 'off'] as const,
    default: 'auto',
    description: 'start a Prometheus scraping every service (auto: when the binary is installed)',
  },
  otlpEndpoint: {
    type: 'string',
    description:
      'send traces to this OTLP/HTTP endpoint (Jaeger, Tempo, a Collector) instead of the built-in receiver',
  },
  toxiproxyUrl: { type: 'string', description: 'a running Toxiproxy API (default: the embedded server)' },
  ...dockerRunOptions,
  prometheusImage: {
    type: 'string',
    description:
      'docker runtime: the Prometheus image (default prom/prometheus:v2.42.0; absent: the host binary)',
  },
  grafanaImage: {
    type: 'string',
    description: 'docker runtime: the Grafana image (default grafana/grafana:11.3.0)',
  },
  tracesImage: {
    type: 'string',
    description:
      'docker runtime: the OTLP trace backend image, Jaeger all-in-one (default jaegertracing/all-in-one:1.62.0)',
  },
} satisfies OptionSpecs;

export interface UpFile {
  target: string;
  runtime: 'local' | 'docker';
  pid: number;
  ingressUrls: string[];
  toxiproxy: { api: string; proxies: Record<string, string> };
  services: Record<string, { role: string; pid: number | null; metrics: string | null }>;
  metrics: Record<string, string>;
  prometheus: string | null;
  grafana: string | null;
  /** `ui`: the trace backend's UI (Jaeger), when one was started. */
  traces: { otlpEndpoint: string; spansFile: string | null; ui: string | null };
  /** Why each of prometheus, grafana, traces was not started (or fell back), when it was not. */
  notStarted: Record<string, string>;
}

export const upCommand: Command = {
  name: 'up',
  summary: commandSummaries.up,
  async run(argv, env) {
    const parsed = parseOptions(options, argv, env);
    if (parsed.help) {
      process.stdout.write(formatHelp('limbo up [options]', upCommand.summary, options));
      return exitCodes.pass;
    }
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    const o = parsed.options;
    const docker = o.runtime === 'docker';
    const choice: RuntimeChoice = await chooseRuntime(o.runtime, env, o, o.target);
    const target = await resolveTarget(o.target, choice);
    if (o.prometheus === 'on' && !docker && !prometheusAvailable())
      throw new UsageError('--prometheus on: no prometheus binary on PATH');
    const dir = resolve(o.dir);
    const runDir = join(dir, `up-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    mkdirSync(runDir, { recursive: true });
    const upFile = join(dir, 'up.json');
    const cleanup = createCleanup();
    const say = (line: string): void => void process.stdout.write(line + '\n');
    const notStarted: Record<string, string> = {};
    const observability = docker ? await import('../runtime/docker-observability.js') : undefined;
    const imagesEnv = choice.env ?? env;
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
      // A declared target has its own services and links; --processors/--partitions shape the reference.
      const shape = target.shape;
      say(
        shape !== undefined
          ? `starting ${o.target}: ${shape.services.map((s) => `${s.name} (${s.role})`).join(', ')}; ${shape.links.length} proxied links…`
          : `starting ${o.target}: ${o.processors} processors, ${o.partitions} partitions…`,
      );
      const testbed = await startTestbed({
        target,
        topology: { processors: o.processors, partitions: o.partitions },
        runDir,
        trace: otlpEndpoint !== undefined ? { otlpEndpoint } : true,
        env,
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
      const rules = alertRulesFile();
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
        services,
        metrics,
        prometheus: prometheusUrl,
        grafana: grafanaUrl,
        traces: { otlpEndpoint, spansFile, ui: tracesUi },
        notStarted,
      };
      writeFileSync(upFile, JSON.stringify(up, null, 2) + '\n');
      cleanup.add('up.json', () => Promise.resolve(rmSync(upFile, { force: true })));
      say(`ingress      ${up.ingressUrls.join(' ')}`);
      say(
        `toxiproxy    ${up.toxiproxy.api} (${Object.keys(up.toxiproxy.proxies).length} proxies, ${started.toxiproxyDescription ?? 'Toxiproxy'})`,
      );
      say(
        `services     ${o.runtime === 'docker' ? 'containers' : 'child processes'} (${started.services.size}): ${[...started.services.values()].map((s) => s.name).join(', ')}`,
      );
      say(
        `prometheus   ${prometheusUrl ?? 'not started'}${notStarted['prometheus'] ? ` (${notStarted['prometheus']})` : ''}`,
      );
      say(
        `grafana      ${grafanaUrl ?? 'not started'}${notStarted['grafana'] ? ` (${notStarted['grafana']})` : ''}`,
      );
      say(
        `traces       OTLP ${otlpEndpoint}${spansFile !== null ? ` → ${spansFile}` : ''}${tracesUi !== null ? `, UI ${tracesUi}` : ''}`,
      );
      if (notStarted['traces'] !== undefined) say(`             (${notStarted['traces']})`);
      say(`everything   ${upFile}`);
      say('up; Ctrl-C to stop');
      const signal = await waitForStopSignal();
      say(`${signal}: stopping…`);
      const forced = setTimeout(() => process.exit(1), 30_000);
      forced.unref();
      return exitCodes.pass;
    } finally {
      await cleanup.runAll();
    }
  },
};
