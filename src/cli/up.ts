// `limbo up`: starts a topology and keeps it up until Ctrl-C / SIGTERM, then cleans up.
//
//   target (every service + a Toxiproxy proxy per link) ─┐
//   OTLP receiver (spans.jsonl) or an external endpoint ─┼─▶ .limbo/up.json ─▶ wait for a signal ─▶ cleanup
//   Prometheus (when the binary is there, 1 s scrapes) ──┘
// up.json tells users and tools where everything is: the ingress URLs, the Toxiproxy API
// and its proxy per link, every service's metrics URL and the Prometheus / trace URLs.
import { createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import { createCleanup } from '../runtime/cleanup.js';
import { createRunnerMetrics } from '../runner/runner-metrics.js';
import { createTarget, targetNames } from '../targets/registry.js';
import { startOtlpReceiver } from '../telemetry/otlp-receiver.js';
import { prometheusAvailable, startPrometheus } from '../telemetry/prometheus-server.js';
import { formatHelp, parseOptions, type OptionSpecs } from '../util/options.js';
import { UsageError } from '../util/errors.js';
import { waitForStopSignal } from '../util/signals.js';

const options = {
  target: { type: 'string', default: 'reference', description: `target: ${targetNames().join(' | ')}` },
  runtime: {
    type: 'enum',
    values: ['local', 'docker'] as const,
    default: 'local',
    description: 'where services run',
  },
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
} satisfies OptionSpecs;

export interface UpFile {
  target: string;
  pid: number;
  ingressUrls: string[];
  toxiproxy: { api: string; proxies: Record<string, string> };
  services: Record<string, { role: string; pid: number | null; metrics: string | null }>;
  metrics: Record<string, string>;
  prometheus: string | null;
  grafana: string | null;
  traces: { otlpEndpoint: string; spansFile: string | null };
}

export const upCommand: Command = {
  name: 'up',
  summary: 'start a topology and keep it up until Ctrl-C (writes .limbo/up.json)',
  async run(argv, env) {
    const parsed = parseOptions(options, argv, env);
    if (parsed.help) {
      process.stdout.write(formatHelp('limbo up [options]', upCommand.summary, options));
      return exitCodes.pass;
    }
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    const o = parsed.options;
    if (o.runtime !== 'local')
      throw new UsageError(`runtime ${o.runtime} is not available for limbo up yet (use --runtime local)`);
    const target = createTarget(o.target);
    if (o.prometheus === 'on' && !prometheusAvailable())
      throw new UsageError('--prometheus on: no prometheus binary on PATH');
    const dir = resolve(o.dir);
    const runDir = join(dir, `up-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    mkdirSync(runDir, { recursive: true });
    const upFile = join(dir, 'up.json');
    const cleanup = createCleanup();
    const say = (line: string): void => void process.stdout.write(line + '\n');
    try {
      let otlpEndpoint = o.otlpEndpoint;
      let spansFile: string | null = null;
      if (otlpEndpoint === undefined) {
        spansFile = join(runDir, 'spans.jsonl');
        const out = createWriteStream(spansFile, { flags: 'w' });
        const receiver = await startOtlpReceiver({
          maxSpans: 0,
          onSpans: (spans) => {
            for (const s of spans) out.write(JSON.stringify(s) + '\n');
          },
        });
        cleanup.add('otlp receiver', async () => {
          await receiver.stop();
          await new Promise<void>((r) => out.end(() => r()));
        });
        otlpEndpoint = receiver.url;
      }
      const serviceEnv: NodeJS.ProcessEnv = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint };
      say(`starting ${o.target}: ${o.processors} processors, ${o.partitions} partitions…`);
      const started = await target.start(
        { processors: o.processors, partitions: o.partitions },
        {
          runDir,
          env: serviceEnv,
          ...(o.toxiproxyUrl !== undefined ? { toxiproxyUrl: o.toxiproxyUrl } : {}),
        },
      );
      cleanup.add(`target ${started.name}`, () => started.stop());
      const runner = await createRunnerMetrics(() => 0).serve();
      cleanup.add('runner /metrics', () => runner.stop());
      const metrics: Record<string, string> = { runner: runner.url, ...started.extraMetricsUrls() };
      const services: UpFile['services'] = {};
      for (const s of started.services.values()) {
        const url = s.metricsUrl();
        if (url !== undefined) metrics[s.name] = url;
        services[s.name] = { role: s.role, pid: s.pid() ?? null, metrics: url ?? null };
      }
      let prometheusUrl: string | null = null;
      if (o.prometheus !== 'off' && prometheusAvailable()) {
        const rules = fileURLToPath(new URL('../../../dashboards/alerts.yml', import.meta.url));
        const prometheus = await startPrometheus({
          targets: Object.entries(metrics).map(([job, url]) => ({ job, url })),
          scrapeIntervalMs: 1000,
          rulesFiles: [rules],
        });
        cleanup.add('prometheus', () => prometheus.stop());
        prometheusUrl = prometheus.url;
      }
      const up: UpFile = {
        target: started.name,
        pid: process.pid,
        ingressUrls: [...started.ingressUrls],
        toxiproxy: { api: started.toxiproxyUrl, proxies: { ...started.links } },
        services,
        metrics,
        prometheus: prometheusUrl,
        grafana: null,
        traces: { otlpEndpoint, spansFile },
      };
      writeFileSync(upFile, JSON.stringify(up, null, 2) + '\n');
      cleanup.add('up.json', () => Promise.resolve(rmSync(upFile, { force: true })));
      say(`ingress      ${up.ingressUrls.join(' ')}`);
      say(`toxiproxy    ${up.toxiproxy.api} (${Object.keys(up.toxiproxy.proxies).length} proxies)`);
      say(`prometheus   ${prometheusUrl ?? 'not started (no prometheus binary, or --prometheus off)'}`);
      say(`traces       OTLP ${otlpEndpoint}${spansFile !== null ? ` → ${spansFile}` : ''}`);
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
