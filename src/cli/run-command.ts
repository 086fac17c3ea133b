// Runs one loaded command the way every `limbo` entry point does: a usage error is exit 2
// with the message, any other error exit 1 with its stack, and the code becomes the
// process's exit code (the process ends once its handles are closed).
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import { UsageError } from '../util/errors.js';
import { mapStack } from '../util/stack-map.js';

export async function runCommand(
  name: string,
  load: () => Promise<Command>,
  argv: string[],
): Promise<number> {
  try {
    const command = await load();
    return await command.run(argv, process.env);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`limbo ${name}: ${err.message}\n`);
      return exitCodes.usage;
    }
    process.stderr.write(
      `limbo ${name}: ${err instanceof Error ? (err.stack !== undefined ? mapStack(err.stack) : err.message) : String(err)}\n`,
    );
    return exitCodes.fail;
  }
}

/** Sets the exit code from `run`'s outcome. */
export function exitWith(run: Promise<number>): void {
  run.then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`limbo: ${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
