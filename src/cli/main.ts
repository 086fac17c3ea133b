// `limbo <command> …`: finds the command, runs it, maps errors to exit codes.
import './compile-cache.js'; // first: the commands' modules load after it
import { commands } from './commands.js';
import { exitCodes } from './command.js';
import { exitWith, runCommand } from './run-command.js';
import { limitHeapGrowth } from '../util/gc.js';

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
  return runCommand(name, () => entry.load(), rest);
}

// A service's live heap stays flat (~20 MiB), so it can run close to it; the runner's grows
// with the run's data, where a tight limit would only add full collections.
if (process.argv[2] === 'serve') limitHeapGrowth();
exitWith(main(process.argv.slice(2)));
