// `limbo proxy [--host H] [--port P] [--seed N]`: the embedded Toxiproxy-compatible server
// on its own, a drop-in for `toxiproxy-server`. Prints the ready line, stops on SIGINT /
// SIGTERM. `--seed` (an extension) makes toxicity draws reproducible.
import { runUntilStopped, waitForStopSignal } from '../launch/signals.js';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import { startToxiproxyServer } from '../proxy/server.js';
import { createLogger } from '../telemetry/logger.js';
import { formatHelp, parseOptions, type OptionSpecs } from '../util/options.js';
import { formatReadyLine } from '../launch/ready.js';
import { UsageError } from '../util/errors.js';
import { commandSummaries } from './command-summaries.js';

const options = {
  host: {
    type: 'string',
    default: '127.0.0.1',
    env: 'LIMBO_PROXY_HOST',
    description: 'address the HTTP API listens on',
  },
  port: {
    type: 'int',
    default: 8474,
    min: 0,
    max: 65535,
    env: 'LIMBO_PROXY_PORT',
    description: 'port of the HTTP API (0 = any free)',
  },
  seed: {
    type: 'int',
    min: 0,
    max: 4294967295,
    env: 'LIMBO_PROXY_SEED',
    description: 'draw toxicity (and packet_loss) from this seed, for replays (default: unseeded, as 2.12)',
  },
} satisfies OptionSpecs;

const description =
  'Runs the embedded Toxiproxy-compatible server (HTTP API of Toxiproxy 2.12.0, plus /metrics).\n' +
  'Extensions a 2.12 client never sees unless it asks: --seed, toxics in POST /populate,\n' +
  'GET /events, connection and toxic counters on /metrics, the packet_loss toxic (docs/proxy.md).';

export const proxyCommand: Command = {
  name: 'proxy',
  summary: commandSummaries.proxy,
  async run(argv, env) {
    const parsed = parseOptions(options, argv, env);
    if (parsed.help) {
      process.stdout.write(formatHelp('limbo proxy [options]', description, options));
      return exitCodes.pass;
    }
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    const logger = createLogger('proxy', { level: env.LIMBO_LOG_LEVEL === 'debug' ? 'debug' : 'info' });
    const server = await startToxiproxyServer({
      host: parsed.options.host,
      port: parsed.options.port,
      ...(parsed.options.seed !== undefined ? { seed: parsed.options.seed } : {}),
      logger,
    });
    // Listening before the ready line: the parent may stop us the moment it reads it.
    const stopSignal = waitForStopSignal();
    process.stdout.write(
      formatReadyLine({
        role: 'proxy',
        node: 'proxy',
        pid: process.pid,
        addresses: { api: server.url, metrics: server.metricsUrl },
      }) + '\n',
    );
    const seeded = parsed.options.seed !== undefined ? `, seed ${parsed.options.seed}` : '';
    process.stdout.write(`limbo proxy: Toxiproxy API on ${server.url}${seeded} (Ctrl-C to stop)\n`);
    await runUntilStopped(() => server.stop(), undefined, stopSignal);
    return exitCodes.pass;
  },
};
