// `limbo up`: starts a topology and keeps it up until Ctrl-C / SIGTERM, then cleans up. This
// file parses the flags, prints what was started and waits for the signal; what is started,
// and .limbo/up.json describing it, is the runner's (runner/up.ts). The terminal gets what
// up.json holds: the ingress (or client) addresses, the Toxiproxy API, a line per service's
// ports and per link, the services, and the Prometheus / Grafana / trace URLs or why not.
import { resolve } from 'node:path';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import type { RuntimeChoice } from '../runtime/service-runtime.js';
import { chooseRuntime, dockerRunOptions } from './docker-options.js';
import { startUp, type UpFile } from '../runner/up.js';
import { resolveTarget } from '../targets/registry.js';
import { prometheusAvailable } from '../observe/prometheus-server.js';
import { formatHelp, parseOptions, type OptionSpecs } from '../util/options.js';
import { UsageError } from '../util/errors.js';
import { waitForStopSignal } from '../launch/signals.js';
import { runtimeOption, targetOption } from './common-options.js';
import { alertRulesFile } from './run-prometheus-choice.js';
import { commandSummaries } from './command-summaries.js';

/** What up.json holds (runner/up.ts writes it): for tools and tests that read the file. */
export type { UpFile, UpLink } from '../runner/up.js';

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

/** The terminal lines for ports and links: `ports  svc a=1 b=2`, `link   from->to listen → upstream`. */
export function wiringLines(up: Pick<UpFile, 'ports' | 'links'>): string[] {
  const lines: string[] = [];
  for (const [service, ports] of Object.entries(up.ports))
    lines.push(
      `ports        ${service} ${Object.entries(ports)
        .map(([name, port]) => `${name}=${port}`)
        .join(' ')}`,
    );
  for (const [link, l] of Object.entries(up.links))
    lines.push(`link         ${link} ${l.listen} → ${l.upstream}${l.enabled ? '' : ' (disabled)'}`);
  return lines;
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
    const say = (line: string): void => void process.stdout.write(line + '\n');
    // A declared target has its own services and links; --processors/--partitions shape the reference.
    const shape = target.shape;
    const running = await startUp({
      target,
      runtime: o.runtime,
      topology: { processors: o.processors, partitions: o.partitions },
      dir: resolve(o.dir),
      prometheus: o.prometheus,
      ...(o.otlpEndpoint !== undefined ? { otlpEndpoint: o.otlpEndpoint } : {}),
      ...(o.toxiproxyUrl !== undefined ? { toxiproxyUrl: o.toxiproxyUrl } : {}),
      env,
      imagesEnv: choice.env ?? env,
      rulesFile: alertRulesFile(),
      onStarting: () =>
        say(
          shape !== undefined
            ? `starting ${o.target}: ${shape.services.map((s) => `${s.name} (${s.role})`).join(', ')}; ${shape.links.length} proxied links…`
            : `starting ${o.target}: ${o.processors} processors, ${o.partitions} partitions…`,
        ),
    });
    try {
      const { up, started } = running;
      const notStarted = up.notStarted;
      const { otlpEndpoint, spansFile, ui: tracesUi } = up.traces;
      // A target whose clients speak their own protocol (a client adapter) is reached at the
      // client links' addresses, not over HTTP.
      const adapter = target.profile?.clientAdapter;
      if (adapter !== undefined)
        say(
          `clients      ${up.ingressUrls.map((u) => new URL(u).host).join(' ')} (client adapter ${adapter.name})`,
        );
      else say(`ingress      ${up.ingressUrls.join(' ')}`);
      say(
        `toxiproxy    ${up.toxiproxy.api} (${Object.keys(up.toxiproxy.proxies).length} proxies, ${started.toxiproxyDescription ?? 'Toxiproxy'})`,
      );
      for (const line of wiringLines(up)) say(line);
      say(
        `services     ${o.runtime === 'docker' ? 'containers' : 'child processes'} (${started.services.size}): ${[...started.services.values()].map((s) => s.name).join(', ')}`,
      );
      say(
        `prometheus   ${up.prometheus ?? 'not started'}${notStarted['prometheus'] ? ` (${notStarted['prometheus']})` : ''}`,
      );
      say(
        `grafana      ${up.grafana ?? 'not started'}${notStarted['grafana'] ? ` (${notStarted['grafana']})` : ''}`,
      );
      say(
        `traces       OTLP ${otlpEndpoint}${spansFile !== null ? ` → ${spansFile}` : ''}${tracesUi !== null ? `, UI ${tracesUi}` : ''}`,
      );
      if (notStarted['traces'] !== undefined) say(`             (${notStarted['traces']})`);
      say(`everything   ${running.file}`);
      say('up; Ctrl-C to stop');
      const signal = await waitForStopSignal();
      say(`${signal}: stopping…`);
      const forced = setTimeout(() => process.exit(1), 30_000);
      forced.unref();
      return exitCodes.pass;
    } finally {
      await running.stop();
    }
  },
};
