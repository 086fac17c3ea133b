// Where a target's services run (`--runtime local|docker`): the one seam between a target
// (which knows roles, arguments and proxies) and the runtime (which knows how to start,
// kill -9, pause, restart and stop one `limbo serve <role>`). Both give the same handle, so
// faults, the runner and `limbo up` never ask which runtime they are on.
//
//   target ─ServiceSpec─▶ runtime.service() ─▶ RuntimeService (ServiceHandle + start/ready)
//          ─toxiproxy()─▶ the run's Toxiproxy (local: embedded; docker: a container)
import type { ServiceRole } from '../protocol/names.js';
import type { ToxiproxyHandle } from './toxiproxy.js';
import type { ServiceHandle } from './service-handle.js';
import type { ReadyInfo } from '../launch/ready.js';
import type { Cleanup } from './cleanup.js';

export type RuntimeName = 'local' | 'docker';
export const runtimeNames: readonly RuntimeName[] = ['local', 'docker'];

export interface ServiceSpec {
  /** `log`, `processor-1`, `ingress-1`: messages, the log file, the container name. */
  name: string;
  role: ServiceRole;
  /** Arguments after `limbo serve <role>`, the same on every (re)start. */
  args: readonly string[];
  /**
   * The service keeps state across restarts in a directory: the runtime adds
   * `--data-dir <dir>` (local: `<runDir>/data/<name>`; docker: inside the container, whose
   * filesystem a restart keeps, just as a restarted process finds its directory).
   */
  dataDir?: boolean;
  env: NodeJS.ProcessEnv;
  readyTimeoutMs: number;
  /**
   * Runs after each incarnation is ready and before start() resolves (e.g. re-pointing the
   * proxies that lead to it). If it throws, that incarnation is killed and start() rejects.
   */
  onReady?: (ready: ReadyInfo) => Promise<void>;
}

export interface RuntimeService extends ServiceHandle {
  /** Starts it (again, with the same arguments and data, after a kill or stop). */
  start(): Promise<void>;
  /** The current incarnation's ready info (undefined before the first start). */
  ready(): ReadyInfo | undefined;
}

export interface ServiceRuntime {
  readonly name: RuntimeName;
  /** A service of the run in `runDir`; its stop is registered with `cleanup`. Not started yet. */
  service(spec: ServiceSpec, runDir: string, cleanup: Cleanup): RuntimeService;
  /**
   * The run's Toxiproxy: `url` when given (a running server), else the runtime's own, whose
   * toxicity draws follow `seed` (the run's) when given.
   */
  toxiproxy(
    url: string | undefined,
    runDir: string,
    env: NodeJS.ProcessEnv,
    seed?: number,
  ): Promise<ToxiproxyHandle>;
}

export interface RuntimeChoice {
  name: RuntimeName;
  /**
   * Where the docker runtime reads its settings: image names (`LIMBO_SERVICES_IMAGE`,
   * `LIMBO_TOXIPROXY_IMAGE`, …) and `LIMBO_DOCKER_TOXIPROXY` (container | embedded).
   * Default: process.env.
   */
  env?: NodeJS.ProcessEnv;
}
