// The docker runtime: each service a container started through testcontainers, with only
// host networking (docs/architecture.md#runtimes), so a service binds 127.0.0.1 ports exactly as a
// local child process does and its ready line tells the ports it got. The handle mirrors
// process.ts's StartedProcess (name, ready info, exited, logs, kill, pause, resume, stop),
// plus restart: the same container again (same arguments, same filesystem).
//
//   startContainer ─▶ GenericContainer (host network, labels run/owner/service) ─▶ start
//        log stream (per incarnation) ─▶ runDir/logs/<name>.log + tail + ready line
//        readiness: Wait.forLogMessage(/limbo-ready /), then the parsed ready line
//        exit: the log stream ends and the engine says the container is not running
//   reaper (docker-reaper.ts) ─▶ removes this process's containers if it dies
// Like a child process, a running container keeps this process alive until it is stopped.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { LimboError, messageOf } from '../util/errors.js';
import { parseReadyLine, READY_PREFIX, type ReadyInfo } from '../util/ready.js';
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

export async function startContainer(options: ContainerOptions): Promise<StartedContainer> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  const apiTimeoutMs = options.apiTimeoutMs ?? 30_000;
  const matchReady = options.matchReady ?? parseReadyLine;
  const readyLog = options.readyLog ?? READY_REGEXP;
  const runId = options.runId ?? processRunId();
  const containerName = `limbo-${runId}-${options.name}`.replace(/[^a-zA-Z0-9_.-]/g, '-');

  const tc = await loadTestcontainers();
  const client = await dockerClient();
  const reaper = ensureReaper();

  mkdirSync(join(options.runDir, 'logs'), { recursive: true });
  const log: WriteStream = createWriteStream(join(options.runDir, 'logs', `${options.name}.log`), {
    flags: 'a',
  });
  const lines: string[] = [];
  const remember = (line: string): void => {
    lines.push(line);
    if (lines.length > TAIL_LINES) lines.shift();
    log.write(line + '\n');
  };
  const tail = (n = 40): string => lines.slice(-n).join('\n');

  // By name until the engine tells the id (the log stream starts before start() returns).
  let dockerContainer: Container = client.container.dockerode.getContainer(containerName);
  let current: Incarnation | undefined;
  let paused = false;
  let removing = false;

  const inspectState = async (): Promise<{ running: boolean; exitCode: number } | undefined> => {
    try {
      const info = await bounded(dockerContainer.inspect(), apiTimeoutMs, `inspecting ${containerName}`);
      return { running: info.State.Running, exitCode: info.State.ExitCode };
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return undefined;
      throw err;
    }
  };

  // One incarnation: from a start of the container to its exit. Lines come from a followed
  // log stream; its end means the container stopped, unless the engine says it still runs
  // (a dropped stream), in which case we follow again from now (bounded).
  const follow = (firstStream: Readable): Incarnation => {
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
        remember(line);
        const info = matchReady(line);
        if (info) resolveReady(info);
      });
      stream.once('end', () => void onEnd());
      stream.once('error', () => undefined);
    };
    const onEnd = async (): Promise<void> => {
      const state = await inspectState().catch(() => undefined);
      if (state?.running && !removing && reattached < LOG_REATTACH_LIMIT) {
        reattached++;
        attach(await client.container.logs(dockerContainer, { since: Date.now() / 1000 }));
        return;
      }
      inc.running = false;
      paused = false;
      clearInterval(keepAlive);
      rejectReady(new ContainerStartError(`${options.name} exited before it was ready`));
      resolveExited(state === undefined ? 'removed' : state.exitCode);
    };
    attach(firstStream);
    return inc;
  };

  // With waitReady, testcontainers waits for nothing (host network: no ports bound to wait on)
  // and the probe decides; else the ready line.
  const waitStrategy = () =>
    options.waitReady !== undefined ? tc.Wait.forListeningPorts() : tc.Wait.forLogMessage(readyLog);
  /** The incarnation's ready info: the probe's, raced against its exit; else the ready line's. */
  const readyOf = async (inc: Incarnation): Promise<ReadyInfo> => {
    if (options.waitReady === undefined)
      return bounded(inc.ready, 5000, `${options.name}: reading the ready line`);
    const gone = new AbortController();
    try {
      return await Promise.race([
        options.waitReady(gone.signal),
        inc.exited.then((code): never => {
          throw new ContainerStartError(`${options.name} exited (${code}) before it was ready`);
        }),
      ]);
    } finally {
      gone.abort();
    }
  };
  const container = new tc.GenericContainer(options.image)
    .withName(containerName)
    .withNetworkMode('host')
    .withLabels({
      ...options.labels,
      [LABEL_RUN]: runId,
      [LABEL_OWNER]: reaper.owner,
      [LABEL_SERVICE]: options.name,
    })
    .withEnvironment(options.env ?? {})
    .withWaitStrategy(waitStrategy())
    .withStartupTimeout(readyTimeoutMs)
    .withLogConsumer((stream) => {
      current = follow(stream);
    });
  if (options.command) container.withCommand([...options.command]);
  if (options.entrypoint) container.withEntrypoint([...options.entrypoint]);
  if (options.user !== undefined) container.withUser(options.user);
  if (options.mounts?.length)
    container.withBindMounts(
      options.mounts.map((m) => ({ source: m.source, target: m.target, mode: m.readOnly ? 'ro' : 'rw' })),
    );

  const removeQuietly = async (): Promise<void> => {
    removing = true;
    try {
      await bounded(
        client.container.dockerode.getContainer(containerName).remove({ force: true, v: true }),
        apiTimeoutMs,
        `removing ${containerName}`,
      );
    } catch {
      // not created, or already gone
    }
  };

  let firstReady: ReadyInfo | undefined;
  try {
    const started = await bounded(
      container.start(),
      readyTimeoutMs + apiTimeoutMs,
      `starting ${containerName}`,
    );
    dockerContainer = client.container.getById(started.getId());
    if (!current) throw new ContainerStartError(`${options.name}: testcontainers gave no log stream`);
    firstReady = await readyOf(current);
  } catch (err) {
    // The log stream of a container that failed to start may still be delivering its last
    // lines: let it (bounded) before removing the container, then report them.
    if (current) await bounded(current.exited, 1000, 'draining the log').catch(() => undefined);
    await removeQuietly();
    log.end();
    const message = messageOf(err);
    throw new ContainerStartError(
      `${options.name} (${options.image}) did not become ready: ${message}\n--- last output of ${options.name} ---\n${tail()}`,
      { cause: err },
    );
  }
  const inner = dockerContainer;
  let ready: ReadyInfo = firstReady;

  const stopIncarnation = async (graceMs: number): Promise<void> => {
    if (!current?.running) return;
    if (paused) await handle.resume();
    try {
      await bounded(
        inner.stop({ t: Math.ceil(graceMs / 1000) }),
        apiTimeoutMs + graceMs,
        `stopping ${containerName}`,
      );
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 304) throw err;
    }
    await bounded(current.exited, apiTimeoutMs, `${options.name}: waiting for the exit`);
  };

  const handle: StartedContainer = {
    name: options.name,
    id: inner.id,
    containerName,
    get ready() {
      return ready;
    },
    get exited() {
      return current!.exited;
    },
    isRunning: () => current?.running ?? false,
    isPaused: () => paused,
    tail,
    async kill(signal) {
      if (!current?.running) return;
      await bounded(inner.kill({ signal }), apiTimeoutMs, `signalling ${containerName}`);
      if (signal === 'SIGKILL') paused = false;
    },
    async pause() {
      if (!current?.running || paused) return;
      await bounded(inner.pause(), apiTimeoutMs, `pausing ${containerName}`);
      paused = true;
    },
    async resume() {
      if (!paused) return;
      await bounded(inner.unpause(), apiTimeoutMs, `unpausing ${containerName}`);
      paused = false;
    },
    async restart(graceMs = 3000) {
      await stopIncarnation(graceMs);
      await bounded(inner.start(), apiTimeoutMs, `starting ${containerName} again`);
      const info = await bounded(inner.inspect(), apiTimeoutMs, `inspecting ${containerName}`);
      const startedAt = new Date(info.State.StartedAt);
      current = follow(await client.container.logs(inner, { since: startedAt.getTime() / 1000 }));
      try {
        await tc.waitForContainer(
          client,
          inner,
          waitStrategy().withStartupTimeout(readyTimeoutMs),
          new tc.BoundPorts(),
          startedAt,
        );
        ready = await readyOf(current);
      } catch (err) {
        const message = messageOf(err);
        throw new ContainerStartError(
          `${options.name} did not become ready after a restart: ${message}\n--- last output ---\n${tail()}`,
          { cause: err },
        );
      }
      return ready;
    },
    async stop(graceMs = 3000) {
      try {
        await stopIncarnation(graceMs);
      } finally {
        await removeQuietly();
        setTimeout(() => log.end(), 100).unref();
      }
    },
    [Symbol.asyncDispose]: () => handle.stop(),
  };
  return handle;
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
