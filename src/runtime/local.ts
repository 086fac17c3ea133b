// The local runtime: every service a child process on 127.0.0.1, its output in
// <runDir>/logs/<name>.log, its PID tracked by the run's cleanup, and a handle for process
// faults (kill -9, SIGSTOP/SIGCONT, restart with the same arguments and data).
//
//   LocalService.start ─▶ startProcess (ready line, bounded) ─▶ handle ─▶ kill/pause/restart
//   localRuntime()     ─▶ the same for a ServiceSpec (`limbo serve <role>` from this checkout)
import { join } from 'node:path';
import type { ServiceRole } from '../protocol/names.js';
import type { ServiceHandle, StopOutcome } from './service-handle.js';
import { openToxiproxy } from './toxiproxy.js';
import type { Cleanup } from './cleanup.js';
import { startLimboService, type StartedProcess } from './process.js';
import type { RuntimeService, ServiceRuntime, ServiceSpec } from './service-runtime.js';

export interface LocalServiceSpec {
  name: string;
  role: ServiceRole | 'toxiproxy';
  /**
   * Starts one incarnation of the service (called again on restart); `onSpawn` is to be called
   * with its PID as soon as it is spawned (see ProcessOptions.onSpawn), so a Ctrl-C during its
   * start-up ends it too.
   */
  start(logFile: string, onSpawn: (pid: number) => void): Promise<StartedProcess>;
  /** How long a stop waits after SIGTERM before SIGKILL (default STOP_GRACE_MS). */
  stopGraceMs?: number;
}

/** How long a stop waits after SIGTERM before SIGKILL, unless the service says otherwise. */
export const STOP_GRACE_MS = 3000;

export interface LocalService extends ServiceHandle {
  /** The current incarnation (undefined before the first start). */
  current(): StartedProcess | undefined;
  start(): Promise<void>;
}

/** Normalises a ready-line address to a full /metrics URL. */
export function metricsUrlOf(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  if (address.startsWith('http://') || address.startsWith('https://'))
    return address.endsWith('/metrics') ? address : `${address.replace(/\/$/, '')}/metrics`;
  return `http://${address}/metrics`;
}

export function createLocalService(spec: LocalServiceSpec, runDir: string, cleanup: Cleanup): LocalService {
  const logFile = join(runDir, 'logs', `${spec.name}.log`);
  let proc: StartedProcess | undefined;
  let untrack: (() => void) | undefined;
  let starting: Promise<void> | undefined;
  const start = (): Promise<void> =>
    (starting ??= (async () => {
      // Tracked from its spawn: a run stopped (Ctrl-C, an error) while this process waits for
      // its ready line still ends it.
      let forget: (() => void) | undefined;
      try {
        const p = await spec.start(logFile, (pid) => (forget = cleanup.trackPid(pid)));
        proc = p;
        forget ??= cleanup.trackPid(p.pid);
        const tracked = forget;
        untrack = tracked;
        void p.exited.then(() => tracked());
      } catch (err) {
        forget?.();
        throw err;
      } finally {
        starting = undefined;
      }
    })());
  let lastStop: StopOutcome | undefined;
  const stop = async (): Promise<void> => {
    if (proc?.isRunning()) {
      await proc.stop(spec.stopGraceMs ?? STOP_GRACE_MS);
      lastStop = proc.lastStop();
    }
    untrack?.();
  };
  const handle: LocalService = {
    name: spec.name,
    role: spec.role,
    current: () => proc,
    start,
    isRunning: () => proc?.isRunning() ?? false,
    pid: () => (proc?.isRunning() ? proc.pid : undefined),
    metricsUrl: () => (proc?.isRunning() ? metricsUrlOf(proc.ready.addresses['metrics']) : undefined),
    async kill() {
      if (!proc?.isRunning()) return;
      proc.kill('SIGKILL');
      await proc.exited;
    },
    pause: () => Promise.resolve(proc?.pause()),
    resume: () => Promise.resolve(proc?.resume()),
    async restart() {
      await stop();
      await start();
    },
    stop,
    lastStop: () => lastStop,
  };
  return handle;
}

/** The local runtime: `limbo serve <role>` child processes; Toxiproxy embedded in this process. */
export function localRuntime(): ServiceRuntime {
  return {
    name: 'local',
    service(spec: ServiceSpec, runDir: string, cleanup: Cleanup): RuntimeService {
      const args =
        spec.dataDir === true
          ? [...spec.args, '--data-dir', join(runDir, 'data', spec.name)]
          : [...spec.args];
      const svc = createLocalService(
        {
          name: spec.name,
          role: spec.role,
          start: async (logFile, onSpawn) => {
            const p = await startLimboService(spec.role, args, {
              name: spec.name,
              logFile,
              onSpawn,
              env: spec.env,
              readyTimeoutMs: spec.readyTimeoutMs,
            });
            try {
              await spec.onReady?.(p.ready);
            } catch (err) {
              // A started process the target cannot use (e.g. its proxies not re-pointed) is killed, not leaked.
              p.kill('SIGKILL');
              await p.exited;
              throw err;
            }
            return p;
          },
        },
        runDir,
        cleanup,
      );
      cleanup.add(`service ${spec.name}`, () => svc.stop());
      return { ...svc, ready: () => svc.current()?.ready };
    },
    toxiproxy: (url, _runDir, env, seed) =>
      openToxiproxy(url, { env, ...(seed !== undefined ? { seed } : {}) }),
  };
}
