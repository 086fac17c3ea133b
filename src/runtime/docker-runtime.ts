// The docker runtime behind `--runtime docker`: each `limbo serve <role>` a container of the
// services image on the host network (so ports, proxies and the runner's OTLP receiver on
// 127.0.0.1 work unchanged), with the local runtime's semantics: kill = SIGKILL to the
// container, pause = `docker pause`, restart = the same container started again (same
// arguments, same filesystem, so the log's data survives a kill -9 exactly as on disk
// locally), output in <runDir>/logs/<name>.log, and every container removed on stop, on
// Ctrl-C (the run's cleanup) and when this process dies (the reaper).
//
//   service(spec) ─first start─▶ startContainerService (labels: run id of this runtime)
//                 ─later starts─▶ container.restart()
//   toxiproxy()  ─▶ url given? use it : LIMBO_DOCKER_TOXIPROXY=embedded? in this process
//                                     : a container (official image if present, else `limbo proxy`)
import { Toxiproxy } from 'toxiproxy-node-client';
import { openToxiproxy, type ToxiproxyHandle } from './toxiproxy.js';
import { metricsUrlOf } from './local.js';
import type { Cleanup } from './cleanup.js';
import { processRunId, startContainerService, type StartedContainer } from './docker.js';
import { dockerImages } from './docker-images.js';
import { startProxyContainer } from './docker-proxy.js';
import { UsageError } from '../util/errors.js';
import type { RuntimeService, ServiceRuntime, ServiceSpec } from './service-runtime.js';
import type { ServiceRole } from '../protocol/names.js';
import type { ReadyInfo } from '../launch/ready.js';

/** Where a service keeps its data inside its container (the image's /tmp is writable by `node`). */
export const CONTAINER_DATA_ROOT = '/tmp/limbo-data';
/** Containers start slower than processes (engine calls, a log stream): a floor on the ready wait. */
const MIN_READY_TIMEOUT_MS = 60_000;
export const STOP_GRACE_MS = 3000;

export interface DockerRuntimeOptions {
  /** Labels every container of this runtime (for `removeRunContainers`); default: unique per runtime. */
  runId?: string;
  /** Image names (LIMBO_*_IMAGE) and LIMBO_DOCKER_TOXIPROXY; default process.env. */
  env?: NodeJS.ProcessEnv;
}

let runtimes = 0;

/** The environment a service container gets: limbo's and OpenTelemetry's variables only (not the host's PATH, HOME…). */
export function containerEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env))
    if (value !== undefined && (key.startsWith('LIMBO_') || key.startsWith('OTEL_'))) out[key] = value;
  return out;
}

export function createDockerRuntime(options: DockerRuntimeOptions = {}): ServiceRuntime {
  const runId = options.runId ?? `${processRunId()}-${++runtimes}`;
  const settings = options.env ?? process.env;
  const image = dockerImages(settings).services;
  return {
    name: 'docker',
    service: (spec, runDir, cleanup) => dockerService(spec, runDir, cleanup, runId, image),
    async toxiproxy(url, runDir, env, seed): Promise<ToxiproxyHandle> {
      const mode = settings['LIMBO_DOCKER_TOXIPROXY'] ?? 'container';
      if (mode !== 'container' && mode !== 'embedded')
        throw new UsageError(`LIMBO_DOCKER_TOXIPROXY=${mode}: expected container or embedded`);
      if ((url ?? env['LIMBO_TOXIPROXY_URL'] ?? '') !== '' || mode === 'embedded')
        return openToxiproxy(url, { env, ...(seed !== undefined ? { seed } : {}) });
      const proxy = await startProxyContainer(
        { name: 'toxiproxy', runDir, runId, ...(seed !== undefined ? { seed } : {}) },
        settings,
      );
      return {
        url: proxy.apiUrl,
        client: new Toxiproxy(proxy.apiUrl),
        stop: () => proxy.stop(1000),
        description: `${proxy.implementation === 'toxiproxy' ? 'Toxiproxy' : 'limbo proxy'} container ${proxy.containerName}`,
      };
    },
  };
}

function dockerService(
  spec: ServiceSpec,
  runDir: string,
  cleanup: Cleanup,
  runId: string,
  image: string,
): RuntimeService {
  const args =
    spec.dataDir === true
      ? [...spec.args, '--data-dir', `${CONTAINER_DATA_ROOT}/${spec.name}`]
      : [...spec.args];
  const readyTimeoutMs = Math.max(spec.readyTimeoutMs, MIN_READY_TIMEOUT_MS);
  return containerService(
    {
      name: spec.name,
      role: spec.role,
      create: () =>
        startContainerService({
          name: spec.name,
          role: spec.role,
          image,
          args,
          env: containerEnv(spec.env),
          runDir,
          runId,
          readyTimeoutMs,
        }),
      ...(spec.onReady !== undefined ? { onReady: spec.onReady } : {}),
    },
    cleanup,
  );
}

export interface ContainerServiceSpec {
  name: string;
  role: ServiceRole;
  /** Creates and starts the container (its first incarnation); later starts restart it. */
  create: () => Promise<StartedContainer>;
  /** Before every start (first and later), e.g. wiping a data directory declared fresh. */
  beforeStart?: () => void;
  /** After each incarnation is ready; if it throws, that incarnation is killed and start() rejects. */
  onReady?: (ready: ReadyInfo) => Promise<void>;
  /** How long a stop waits after SIGTERM before SIGKILL (default STOP_GRACE_MS). */
  stopGraceMs?: number;
}

/**
 * A container as a RuntimeService, with the local runtime's semantics: start = create the
 * first time, the same container started again after (same filesystem), kill = SIGKILL,
 * pause = docker pause, stop = SIGTERM then SIGKILL after the grace period, then removed
 * (registered with `cleanup`).
 */
export function containerService(spec: ContainerServiceSpec, cleanup: Cleanup): RuntimeService {
  let container: StartedContainer | undefined;
  let starting: Promise<void> | undefined;
  const running = (): boolean => container?.isRunning() ?? false;

  const startOnce = async (): Promise<void> => {
    spec.beforeStart?.();
    let c = container;
    if (c === undefined) c = container = await spec.create();
    else await c.restart(spec.stopGraceMs ?? STOP_GRACE_MS);
    try {
      await spec.onReady?.(c.ready);
    } catch (err) {
      await c.kill('SIGKILL').catch(() => undefined);
      await c.exited;
      throw err;
    }
  };
  const start = (): Promise<void> =>
    (starting ??= startOnce().finally(() => {
      starting = undefined;
    }));
  const stop = async (): Promise<void> => {
    const c = container;
    container = undefined;
    await c?.stop(spec.stopGraceMs ?? STOP_GRACE_MS);
  };
  cleanup.add(`container ${spec.name}`, stop);

  return {
    name: spec.name,
    role: spec.role,
    start,
    ready: () => container?.ready,
    isRunning: running,
    // A container's process lives in another PID namespace: no PID of ours to give.
    pid: () => undefined,
    metricsUrl: () => (running() ? metricsUrlOf(container?.ready.addresses['metrics']) : undefined),
    async kill() {
      if (!running()) return;
      await container!.kill('SIGKILL');
      await container!.exited;
    },
    pause: async () => {
      if (running()) await container!.pause();
    },
    resume: async () => {
      await container?.resume();
    },
    restart: start,
    stop,
  };
}
