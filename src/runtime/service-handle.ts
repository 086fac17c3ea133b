// A running service as faults see it: kill, pause, restart, whatever runs it (a child
// process, a container, a real server's binary). Runtimes implement it; targets hand their
// services out as these.
import type { ServiceRole } from '../protocol/names.js';

export interface ServiceHandle {
  readonly name: string;
  /** `endpoint`: a target's service deployment (e.g. Restate's SDK endpoint). */
  readonly role: ServiceRole | 'toxiproxy' | 'endpoint';
  isRunning(): boolean;
  /** Its PID on this host; undefined when not running, or in a container. */
  pid(): number | undefined;
  /** The service's current /metrics URL (changes across restarts), if it is running. */
  metricsUrl(): string | undefined;
  /** kill -9 (a container: SIGKILL to it); resolves once it has exited. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT (a container: docker pause / unpause). */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Starts it again with the same arguments and data (stopping it first if it runs). */
  restart(): Promise<void>;
  /**
   * Stops it, loses its data dir, starts it again — only on services whose target says they
   * survive that (rebuild from their peers or the log); absent everywhere else.
   */
  restartWithoutData?(): Promise<void>;
  stop(): Promise<void>;
  /**
   * How its last graceful stop (stop or restart) went, where the runtime can tell: whether it
   * exited on SIGTERM within the grace period or had to be SIGKILLed.
   */
  lastStop?(): StopOutcome | undefined;
}

export interface StopOutcome {
  /** It exited on SIGTERM before the grace period ran out (false: it was SIGKILLed). */
  graceful: boolean;
  /** From SIGTERM to exit. */
  ms: number;
  graceMs: number;
}
