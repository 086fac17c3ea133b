// `limbo <command> …`: finds the command, runs it, maps errors to exit codes.
import './compile-cache.js'; // first: the commands' modules load after it
import { commands } from './commands.js';
import { exitCodes } from './command.js';
import { UsageError } from '../util/errors.js';

function usage(): string {
  const lines = ['usage: limbo <command> [options]', '', 'commands:'];
  for (const c of commands) lines.push(`  ${c.name.padEnd(10)} ${c.summary}`);
  lines.push('', 'Run `limbo <command> --help` for the options of a command.');
  return lines.join('\n') + '\n';
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? exitCodes.usage : exitCodes.pass;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    process.stderr.write(`limbo: unknown command "${name}"\n\n${usage()}`);
    return exitCodes.usage;
  }
  try {
    const command = await entry.load();
    return await command.run(rest, process.env);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`limbo ${name}: ${err.message}\n`);
      return exitCodes.usage;
    }
    process.stderr.write(
      `limbo ${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return exitCodes.fail;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`limbo: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
