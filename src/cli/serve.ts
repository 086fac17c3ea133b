// `limbo serve <role> [options]`: runs one service of the reference cluster in the
// foreground, prints the machine-readable ready line, stops cleanly on SIGTERM / SIGINT.
import { runUntilStopped, waitForStopSignal } from '../launch/signals.js';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import { roles } from '../services/roles.js';
import { createLogger } from '../telemetry/logger.js';
import { startSdkTracing } from '../telemetry/sdk-tracing.js';
import { createTracing } from '../telemetry/tracing.js';
import { formatHelp, parseOptions } from '../util/options.js';
import { formatReadyLine } from '../launch/ready.js';
import { UsageError } from '../util/errors.js';
import { commandSummaries } from './command-summaries.js';

function usage(): string {
  const lines = ['usage: limbo serve <role> [options]', '', 'roles:'];
  for (const r of roles) lines.push(`  ${r.role.padEnd(10)} ${r.description}`);
  lines.push('', 'Run `limbo serve <role> --help` for the options of a role.');
  return lines.join('\n') + '\n';
}

export const serveCommand: Command = {
  name: 'serve',
  summary: commandSummaries.serve,
  async run(argv, env) {
    const [roleName, ...rest] = argv;
    if (roleName === undefined || roleName === '--help' || roleName === '-h') {
      process.stdout.write(usage());
      return roleName === undefined ? exitCodes.usage : exitCodes.pass;
    }
    const entry = roles.find((r) => r.role === roleName);
    if (!entry)
      throw new UsageError(`unknown role "${roleName}" (roles: ${roles.map((r) => r.role).join(', ')})`);
    const role = await entry.load();
    const parsed = parseOptions(role.options, rest, env);
    if (parsed.help) {
      process.stdout.write(formatHelp(`limbo serve ${role.role} [options]`, role.description, role.options));
      return exitCodes.pass;
    }
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    const logLevel = env.LIMBO_LOG_LEVEL === 'debug' ? 'debug' : 'info';
    const logger = createLogger(role.role, { level: logLevel });
    const started = await role.start(parsed.options, {
      logger,
      env,
      // One service in this process: its traces go through the NodeSDK (standard OTEL_* variables).
      tracingFor: (node) => startSdkTracing(node, logger, env, createTracing),
    });
    // Listening before the ready line: the parent may stop us the moment it reads it.
    const stopSignal = waitForStopSignal();
    process.stdout.write(
      formatReadyLine({
        role: role.role,
        node: started.node,
        pid: process.pid,
        addresses: started.addresses,
      }) + '\n',
    );
    await runUntilStopped(() => started.stop(), undefined, stopSignal);
    return exitCodes.pass;
  },
};
