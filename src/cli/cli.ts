// `limbo <command> …`: finds the command, runs it, maps errors to exit codes. Every way of
// starting the CLI comes here: bin/limbo.js (entry.ts, from the runner's bundle when it is
// current) and dist/src/cli/main.js.
import { commands } from './commands.js';
import { exitCodes } from './command.js';
import { exitWith, runCommand } from './run-command.js';
import { limitHeapGrowth } from '../launch/gc.js';

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

/** Runs `limbo <argv…>`; its outcome becomes the process's exit code. */
export function runLimbo(argv: string[]): void {
  // A service's live heap stays flat (~20 MiB), so it can run close to it; the runner's grows
  // with the run's data, where a tight limit would only add full collections.
  if (argv[0] === 'serve') limitHeapGrowth();
  exitWith(main(argv));
}
