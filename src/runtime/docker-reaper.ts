// Removal of our containers even when this process dies without cleaning up (kill -9, a
// crash, an exit that skipped stop()): what testcontainers' Ryuk container does, done by a
// detached child process, because Ryuk needs a registry and port mappings that a machine
// without them (docs/architecture.md#runtimes) lacks.
//
//   this process ──spawn (detached, own session)──▶ reaper: polls that its parent lives
//   every container we create carries LABEL_OWNER=<owner>   parent gone ─▶ remove by label, exit
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';

export interface Reaper {
  /** The label value that marks this process's containers. */
  readonly owner: string;
  readonly pid: number;
  /** Ends the reaper (after a normal cleanup): it removes nothing then. */
  stop(): void;
}

let reaper: Reaper | undefined;

/** This process's reaper, started on first use. */
export function ensureReaper(env: NodeJS.ProcessEnv = process.env): Reaper {
  if (reaper) return reaper;
  const owner = `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  const main = fileURLToPath(new URL('./docker-reaper-main.js', import.meta.url));
  const child = spawn(process.execPath, [main, String(process.pid), owner], {
    detached: true,
    stdio: 'ignore',
    env,
  });
  child.unref();
  const pid = child.pid ?? -1;
  reaper = {
    owner,
    pid,
    stop() {
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      reaper = undefined;
    },
  };
  return reaper;
}
