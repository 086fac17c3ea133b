// The docker runtime: each service a container started through testcontainers, with only
// host networking (docs/architecture.md#runtimes), so a service binds 127.0.0.1 ports exactly as a
// local child process does and its ready line tells the ports it got. The handle mirrors
// process.ts's StartedProcess (name, ready info, exited, logs, kill, pause, resume, stop),
// plus restart: the same container again (same arguments, same filesystem).
//
//   startContainer ─▶ GenericContainer (host network, labels run/owner/service) ─▶ start
//        log stream (per incarnation) ─▶ OutputTail (runDir/logs/<name>.log + tail) + ready line
//        readiness: Wait.forLogMessage(/limbo-ready /), then the parsed ready line
//        exit: the log stream ends and the engine says the container is not running
//   reaper (docker-reaper.ts) ─▶ removes this process's containers if it dies
// Like a child process, a running container keeps this process alive until it is stopped.
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { OutputTail } from '../launch/child-launcher.js';
import { LimboError, messageOf } from '../util/errors.js';
import { parseReadyLine, READY_PREFIX, type ReadyInfo } from '../launch/ready.js';
import {
  bounded,
  dockerClient,
  LABEL_OWNER,
  LABEL_ROLE,
  LABEL_RUN,
  LABEL_SERVICE,
  loadTestcontainers,
  type DockerClient,
} from './docker-engine.js';
import { dockerImages } from './docker-images.js';
import { ensureReaper } from './docker-reaper.js';
import { serviceEnvDefaults, serviceNodeFlags } from './process.js';

export interface ContainerOptions {
  /** A name for messages, the log file and the container name, e.g. `processor-1`. */
  name: string;
  image: string;
  /** Arguments to the image's entrypoint (the `limbo` CLI for the services image). */
  command?: readonly string[];
  entrypoint?: readonly string[];
  env?: Record<string, string>;
  /** Output goes to `<runDir>/logs/<name>.log`. */
  runDir: string;
  /** Labels the container for `removeRunContainers(runId)`; default: this process's run. */
  runId?: string;
  /** Bound on the wait for readiness (start and restart). */
  readyTimeoutMs?: number;
  /** The log line testcontainers waits for; default /limbo-ready /. */
  readyLog?: RegExp;
  /** Reads the ready info from a line; default: the `limbo-ready {json}` line. */
  matchReady?: (line: string) => ReadyInfo | undefined;
  /**
   * Readiness from outside instead of a log line (an HTTP or TCP probe on the host network):
   * called after each start, given up (rejected) when the container exits first.
   */
  waitReady?: (signal: AbortSignal) => Promise<ReadyInfo>;
  mounts?: readonly { source: string; target: string; readOnly?: boolean }[];
  /** `uid[:gid]` or a user name; default: the image's (non-root for the services image). */
  user?: string;
  labels?: Record<string, string>;
  /** Bound on each engine call (stop, kill, pause, inspect, remove). */
  apiTimeoutMs?: number;
}

export interface ContainerServiceOptions extends Omit<ContainerOptions, 'image' | 'command'> {
  /** Default: the services image (`LIMBO_SERVICES_IMAGE`, else limbo/services:local). */
  image?: string;
  /** `log`, `processor` or `ingress`: runs `limbo serve <role> <args…>`. */
  role: string;
  args?: readonly string[];
}

export interface StartedContainer extends AsyncDisposable {
  readonly name: string;
  /** The engine's container id. */
  readonly id: string;
  readonly containerName: string;
  /** The ready info of the current incarnation (a restart may bind new ports). */
  readonly ready: ReadyInfo;
  /** Resolves with the exit code once the current incarnation has exited. */
  readonly exited: Promise<number | string>;
  isRunning(): boolean;
  isPaused(): boolean;
  /** The last lines of output, for error messages. */
  tail(lines?: number): string;
  /**
   * Sends a signal to the container's main process (`docker kill --signal`). SIGKILL works
   * on a paused container too; the engine refuses other signals until it is resumed.
   */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Freezes every process of the container (`docker pause`). */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Stops the container (SIGTERM, SIGKILL after `graceMs`) if it runs, starts it again. */
  restart(graceMs?: number): Promise<ReadyInfo>;
  /** SIGTERM, SIGKILL after `graceMs`, then removes the container. */
  stop(graceMs?: number): Promise<void>;
}

export class ContainerStartError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_CONTAINER_START', message, options);
  }
}

type Container = ReturnType<DockerClient['container']['getById']>;

const TAIL_LINES = 200;
const READY_REGEXP = new RegExp(`^${READY_PREFIX}`, 'm');
const LOG_REATTACH_LIMIT = 5;

let defaultRunId: string | undefined;

/** The run id containers get when the caller gives none: one per process. */
export function processRunId(): string {
  return (defaultRunId ??= `p${process.pid}-${Date.now().toString(36)}`);
}

/** Starts `limbo serve <role> <args…>` in the services image. */
export function startContainerService(
  options: ContainerServiceOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<StartedContainer> {
  const { role, args = [], image, labels, ...rest } = options;
  return startContainer({
    ...rest,
    // The same Node flags and environment as a local service (NODE_OPTIONS allows the flags);
    // a caller's own wins.
    env: { NODE_OPTIONS: serviceNodeFlags.join(' '), ...serviceEnvDefaults, ...rest.env },
    image: image ?? dockerImages(env).services,
    command: ['serve', role, ...args],
    labels: { [LABEL_ROLE]: role, ...labels },
  });
}

interface Incarnation {
  exited: Promise<number | string>;
  ready: Promise<ReadyInfo>;
  running: boolean;
}

type Testcontainers = Awaited<ReturnType<typeof loadTestcontainers>>;
type ContainerBuilder = InstanceType<Testcontainers['GenericContainer']>;

export async function startContainer(options: ContainerOptions): Promise<StartedContainer> {
  const container = new RunningContainer(options, await loadTestcontainers(), await dockerClient());
  await container.startFirst();
  return container;
}

/**
 * One container across its incarnations, as named steps over its state: `startFirst` builds
 * it (`build`) and waits for it (`readyOf`), `follow` reads an incarnation's log stream to its
 * end, and `restart`, `stop` (with `stopIncarnation`, `removeQuietly`), `kill`, `pause` and
 * `resume` act on it through the engine, each call bounded.
 */
class RunningContainer implements StartedContainer {
  readonly name: string;
  readonly containerName: string;
  readonly #options: ContainerOptions;
  readonly #readyTimeoutMs: number;
  readonly #apiTimeoutMs: number;
  readonly #matchReady: (line: string) => ReadyInfo | undefined;
  readonly #readyLog: RegExp;
  readonly #runId: string;
  readonly #tc: Testcontainers;
  readonly #client: DockerClient;
  readonly #output: OutputTail;
  /** By name until the engine tells the id (the log stream starts before start() returns). */
  #dockerContainer: Container;
  #current: Incarnation | undefined;
  #paused = false;
  #removing = false;
  #ready: ReadyInfo | undefined;

  constructor(options: ContainerOptions, tc: Testcontainers, client: DockerClient) {
    this.#options = options;
    this.name = options.name;
    this.#readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
    this.#apiTimeoutMs = options.apiTimeoutMs ?? 30_000;
    this.#matchReady = options.matchReady ?? parseReadyLine;
    this.#readyLog = options.readyLog ?? READY_REGEXP;
    this.#runId = options.runId ?? processRunId();
    this.containerName = `limbo-${this.#runId}-${options.name}`.replace(/[^a-zA-Z0-9_.-]/g, '-');
    this.#tc = tc;
    this.#client = client;
    this.#output = new OutputTail(TAIL_LINES, join(options.runDir, 'logs', `${options.name}.log`));
    this.#dockerContainer = client.container.dockerode.getContainer(this.containerName);
  }

  get id(): string {
    return this.#dockerContainer.id;
  }

  get ready(): ReadyInfo {
    return this.#ready!;
  }

  get exited(): Promise<number | string> {
    return this.#current!.exited;
  }

  isRunning(): boolean {
    return this.#current?.running ?? false;
  }

  isPaused(): boolean {
    return this.#paused;
  }

  tail(n = 40): string {
    return this.#output.tail(n);
  }

  async #inspectState(): Promise<{ running: boolean; exitCode: number } | undefined> {
    try {
      const info = await bounded(
        this.#dockerContainer.inspect(),
        this.#apiTimeoutMs,
        `inspecting ${this.containerName}`,
      );
      return { running: info.State.Running, exitCode: info.State.ExitCode };
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return undefined;
      throw err;
    }
  }

  /**
   * One incarnation: from a start of the container to its exit. Lines come from a followed
   * log stream; its end means the container stopped, unless the engine says it still runs
   * (a dropped stream), in which case we follow again from now (bounded).
   */
  #follow(firstStream: Readable): Incarnation {
    let resolveExited!: (code: number | string) => void;
    let resolveReady!: (info: ReadyInfo) => void;
    let rejectReady!: (err: Error) => void;
    const inc: Incarnation = {
      running: true,
      exited: new Promise((resolve) => (resolveExited = resolve)),
      ready: new Promise((resolve, reject) => {
        resolveReady = resolve;
        rejectReady = reject;
      }),
    };
    inc.ready.catch(() => undefined);
    // testcontainers unrefs the log stream's socket; a running container keeps this process
    // alive the way a child process does, so awaiting `exited` sees the exit.
    const keepAlive = setInterval(() => undefined, 3600_000);
    let reattached = 0;
    const attach = (stream: Readable): void => {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        this.#output.add(line);
        const info = this.#matchReady(line);
        if (info) resolveReady(info);
      });
      stream.once('end', () => void onEnd());
      stream.once('error', () => undefined);
    };
    const onEnd = async (): Promise<void> => {
      const state = await this.#inspectState().catch(() => undefined);
      if (state?.running && !this.#removing && reattached < LOG_REATTACH_LIMIT) {
        reattached++;
        attach(await this.#client.container.logs(this.#dockerContainer, { since: Date.now() / 1000 }));
        return;
      }
      inc.running = false;
      this.#paused = false;
      clearInterval(keepAlive);
      rejectReady(new ContainerStartError(`${this.name} exited before it was ready`));
      resolveExited(state === undefined ? 'removed' : state.exitCode);
    };
    attach(firstStream);
    return inc;
  }

  /**
   * With waitReady, testcontainers waits for nothing (host network: no ports bound to wait on)
   * and the probe decides; else the ready line.
   */
  #waitStrategy(): ReturnType<Testcontainers['Wait']['forLogMessage']> {
    return this.#options.waitReady !== undefined
      ? this.#tc.Wait.forListeningPorts()
      : this.#tc.Wait.forLogMessage(this.#readyLog);
  }

  /** The incarnation's ready info: the probe's, raced against its exit; else the ready line's. */
  async #readyOf(inc: Incarnation): Promise<ReadyInfo> {
    const waitReady = this.#options.waitReady;
    if (waitReady === undefined) return bounded(inc.ready, 5000, `${this.name}: reading the ready line`);
    const gone = new AbortController();
    try {
      return await Promise.race([
        waitReady(gone.signal),
        inc.exited.then((code): never => {
          throw new ContainerStartError(`${this.name} exited (${code}) before it was ready`);
        }),
      ]);
    } finally {
      gone.abort();
    }
  }

  /** The container as testcontainers builds it: host network, labels, the options given. */
  #build(): ContainerBuilder {
    const options = this.#options;
    const container = new this.#tc.GenericContainer(options.image)
      .withName(this.containerName)
      .withNetworkMode('host')
      .withLabels({
        ...options.labels,
        [LABEL_RUN]: this.#runId,
        [LABEL_OWNER]: ensureReaper().owner,
        [LABEL_SERVICE]: options.name,
      })
      .withEnvironment(options.env ?? {})
      .withWaitStrategy(this.#waitStrategy())
      .withStartupTimeout(this.#readyTimeoutMs)
      .withLogConsumer((stream) => {
        this.#current = this.#follow(stream);
      });
    if (options.command) container.withCommand([...options.command]);
    if (options.entrypoint) container.withEntrypoint([...options.entrypoint]);
    if (options.user !== undefined) container.withUser(options.user);
    if (options.mounts?.length)
      container.withBindMounts(
        options.mounts.map((m) => ({ source: m.source, target: m.target, mode: m.readOnly ? 'ro' : 'rw' })),
      );
    return container;
  }

  /** Creates and starts the container, and waits until it is ready; on failure removes it. */
  async startFirst(): Promise<void> {
    const container = this.#build();
    try {
      const started = await bounded(
        container.start(),
        this.#readyTimeoutMs + this.#apiTimeoutMs,
        `starting ${this.containerName}`,
      );
      this.#dockerContainer = this.#client.container.getById(started.getId());
      if (!this.#current) throw new ContainerStartError(`${this.name}: testcontainers gave no log stream`);
      this.#ready = await this.#readyOf(this.#current);
    } catch (err) {
      // The log stream of a container that failed to start may still be delivering its last
      // lines: let it (bounded) before removing the container, then report them.
      if (this.#current) await bounded(this.#current.exited, 1000, 'draining the log').catch(() => undefined);
      await this.#removeQuietly();
      this.#output.endLog();
      const message = messageOf(err);
      throw new ContainerStartError(
        `${this.name} (${this.#options.image}) did not become ready: ${message}\n--- last output of ${this.name} ---\n${this.tail()}`,
        { cause: err },
      );
    }
  }

  async #removeQuietly(): Promise<void> {
    this.#removing = true;
    try {
      await bounded(
        this.#client.container.dockerode.getContainer(this.containerName).remove({ force: true, v: true }),
        this.#apiTimeoutMs,
        `removing ${this.containerName}`,
      );
    } catch {
      // not created, or already gone
    }
  }

  async #stopIncarnation(graceMs: number): Promise<void> {
    const current = this.#current;
    if (!current?.running) return;
    if (this.#paused) await this.resume();
    try {
      await bounded(
        this.#dockerContainer.stop({ t: Math.ceil(graceMs / 1000) }),
        this.#apiTimeoutMs + graceMs,
        `stopping ${this.containerName}`,
      );
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 304) throw err;
    }
    await bounded(current.exited, this.#apiTimeoutMs, `${this.name}: waiting for the exit`);
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (!this.#current?.running) return;
    await bounded(
      this.#dockerContainer.kill({ signal }),
      this.#apiTimeoutMs,
      `signalling ${this.containerName}`,
    );
    if (signal === 'SIGKILL') this.#paused = false;
  }

  async pause(): Promise<void> {
    if (!this.#current?.running || this.#paused) return;
    await bounded(this.#dockerContainer.pause(), this.#apiTimeoutMs, `pausing ${this.containerName}`);
    this.#paused = true;
  }

  async resume(): Promise<void> {
    if (!this.#paused) return;
    await bounded(this.#dockerContainer.unpause(), this.#apiTimeoutMs, `unpausing ${this.containerName}`);
    this.#paused = false;
  }

  async restart(graceMs = 3000): Promise<ReadyInfo> {
    const inner = this.#dockerContainer;
    await this.#stopIncarnation(graceMs);
    await bounded(inner.start(), this.#apiTimeoutMs, `starting ${this.containerName} again`);
    const info = await bounded(inner.inspect(), this.#apiTimeoutMs, `inspecting ${this.containerName}`);
    const startedAt = new Date(info.State.StartedAt);
    const current = this.#follow(
      await this.#client.container.logs(inner, { since: startedAt.getTime() / 1000 }),
    );
    this.#current = current;
    try {
      await this.#tc.waitForContainer(
        this.#client,
        inner,
        this.#waitStrategy().withStartupTimeout(this.#readyTimeoutMs),
        new this.#tc.BoundPorts(),
        startedAt,
      );
      this.#ready = await this.#readyOf(current);
    } catch (err) {
      const message = messageOf(err);
      throw new ContainerStartError(
        `${this.name} did not become ready after a restart: ${message}\n--- last output ---\n${this.tail()}`,
        { cause: err },
      );
    }
    return this.#ready;
  }

  async stop(graceMs = 3000): Promise<void> {
    try {
      await this.#stopIncarnation(graceMs);
    } finally {
      await this.#removeQuietly();
      this.#output.endLog(100);
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

export {
  dockerAvailable,
  DockerUnavailableError,
  imageExists,
  listContainersByLabel,
  removeContainersByLabel,
  removeRunContainers,
  LABEL_OWNER,
  LABEL_ROLE,
  LABEL_RUN,
  LABEL_SERVICE,
} from './docker-engine.js';
export { dockerImages, type DockerImages } from './docker-images.js';
