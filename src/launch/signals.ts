// Foreground services (`limbo serve`, `limbo proxy`) run until Ctrl-C or SIGTERM, then stop
// cleanly — with a bounded grace: if stopping hangs, the process exits anyway.

/** Resolves on the first SIGTERM or SIGINT. */
export function waitForStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/**
 * Waits for a stop signal, then runs `stop`, exiting after `graceMs` if it has not finished.
 * A process that announces it is ready listens first (`signal`, from waitForStopSignal before
 * the ready line): a parent may send SIGTERM the moment it reads that line, and a signal that
 * arrives before any listener ends the process at once, with no clean stop.
 */
export async function runUntilStopped(
  stop: () => Promise<void>,
  graceMs = 5000,
  signal: Promise<NodeJS.Signals> = waitForStopSignal(),
): Promise<void> {
  await signal;
  const forced = setTimeout(() => process.exit(0), graceMs);
  forced.unref();
  await stop();
}
