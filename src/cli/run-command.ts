// Runs one loaded command the way every `limbo` entry point does: a usage error is exit 2
// with the message, any other error exit 1 with its stack, and the code becomes the
// process's exit code (the process ends once its handles are closed, or a bounded while after).
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import { UsageError } from '../util/errors.js';
import { mapStack } from '../launch/stack-map.js';

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

/** How long a finished command may wait for its handles to close before it exits anyway. */
export const HANDLES_GRACE_MS = 5000;

/**
 * Sets the exit code from `run`'s outcome. The process ends once its handles are closed; if
 * something still holds one `graceMs` after the command finished (a user's client adapter
 * that never closes its connection, a library's reconnect loop), it says so and exits, so a
 * finished run never hangs its caller.
 */
export function exitWith(run: Promise<number>, graceMs = HANDLES_GRACE_MS): void {
  const settle = (code: number): void => {
    process.exitCode = code;
    setTimeout(() => {
      process.stderr.write(
        `limbo: handles still open ${graceMs} ms after the command finished (e.g. a client adapter's connection left open); exiting\n`,
      );
      process.exit(code);
    }, graceMs).unref();
  };
  run.then(settle, (err: unknown) => {
    process.stderr.write(`limbo: ${String(err)}\n`);
    settle(1);
  });
}
