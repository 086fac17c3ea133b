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

/** Waits for a stop signal, then runs `stop`, exiting after `graceMs` if it has not finished. */
export async function runUntilStopped(stop: () => Promise<void>, graceMs = 5000): Promise<void> {
  await waitForStopSignal();
  const forced = setTimeout(() => process.exit(0), graceMs);
  forced.unref();
  await stop();
}
