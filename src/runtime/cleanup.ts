// Everything a run starts registers its undo here, so it is undone on a normal end, on an
// error and on Ctrl-C / SIGTERM: async cleanups run in reverse order, each bounded; and on a
// hard exit, every child PID still alive gets SIGKILL synchronously (only our own PIDs).
export interface Cleanup {
  /** Registers an undo; returns a function that unregisters it (after a normal stop). */
  add(label: string, undo: () => Promise<void>): () => void;
  /** Kills `pid` with SIGKILL at the end of the cleanup (or at once, if it has begun) unless forgotten. */
  trackPid(pid: number): () => void;
  runAll(): Promise<void>;
  /** Ctrl-C / SIGTERM: clean up, then exit 130 / 143. Returns the uninstaller. */
  installSignalHandlers(onSignal?: (signal: NodeJS.Signals) => void): () => void;
}

export function createCleanup(options: { stepTimeoutMs?: number } = {}): Cleanup {
  const stepTimeoutMs = options.stepTimeoutMs ?? 10_000;
  const undos: { label: string; undo: () => Promise<void> }[] = [];
  const pids = new Set<number>();
  let running: Promise<void> | undefined;
  const killAllSync = (): void => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', killAllSync);
  const cleanup: Cleanup = {
    add(label, undo) {
      const item = { label, undo };
      undos.push(item);
      return () => {
        const i = undos.indexOf(item);
        if (i >= 0) undos.splice(i, 1);
      };
    },
    trackPid(pid) {
      // Once the cleanup has begun nothing new may outlive it: a process that spawned meanwhile
      // (a start-up still under way when Ctrl-C came) is ended at once.
      if (running !== undefined) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
        return () => undefined;
      }
      pids.add(pid);
      return () => pids.delete(pid);
    },
    runAll() {
      running ??= (async () => {
        while (undos.length > 0) {
          const { label, undo } = undos.pop()!;
          let timer: NodeJS.Timeout | undefined;
          try {
            await Promise.race([
              undo(),
              new Promise(
                (_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), stepTimeoutMs)),
              ),
            ]);
          } catch (err) {
            process.stderr.write(`cleanup of ${label} failed: ${String(err)}\n`);
          } finally {
            clearTimeout(timer);
          }
        }
        killAllSync();
        process.off('exit', killAllSync);
      })();
      return running;
    },
    installSignalHandlers(onSignal) {
      const handler = (signal: NodeJS.Signals): void => {
        onSignal?.(signal);
        void cleanup.runAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
      };
      process.once('SIGINT', handler);
      process.once('SIGTERM', handler);
      return () => {
        process.off('SIGINT', handler);
        process.off('SIGTERM', handler);
      };
    },
  };
  return cleanup;
}
