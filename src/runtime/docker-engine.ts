// The Docker engine as the docker runtime reaches it: testcontainers, loaded on first use
// (the services image and the local runtime never load it), with the settings a machine
// without a registry needs (docs/architecture.md#runtimes), the labels every container of ours
// carries, and removal by label — the cleanup that works whoever started the container.
//
//   loadTestcontainers() ─▶ getContainerRuntimeClient() (DOCKER_HOST, bounded) ─▶ dockerode
import { LimboError, messageOf } from '../util/errors.js';
import { bounded } from '../util/bounded.js';

export type Testcontainers = typeof import('testcontainers');
export type DockerClient = Awaited<ReturnType<Testcontainers['getContainerRuntimeClient']>>;

/** The run a container belongs to: `removeRunContainers(runId)` removes them all. */
export const LABEL_RUN = 'org.limbo.run';
/** The process that started it: its reaper removes them if that process dies. */
export const LABEL_OWNER = 'org.limbo.owner';
export const LABEL_SERVICE = 'org.limbo.service';
export const LABEL_ROLE = 'org.limbo.role';

export class DockerUnavailableError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_DOCKER_UNAVAILABLE', message, options);
  }
}

let loading: Promise<Testcontainers> | undefined;

/**
 * testcontainers, with two defaults it reads from process.env when it first talks to an
 * engine (so they are process-wide by the library's design): no Ryuk reaper (it needs a
 * registry and port mappings; our own reaper replaces it) and 127.0.0.1 as the host of
 * any mapped port (only loopback addresses are used here). Both keep a value set by the user.
 */
export function loadTestcontainers(): Promise<Testcontainers> {
  process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
  process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';
  return (loading ??= import('testcontainers'));
}

export { bounded };

/** The engine's client (DOCKER_HOST, ~/.testcontainers.properties, /var/run/docker.sock). */
export async function dockerClient(timeoutMs = 10_000): Promise<DockerClient> {
  const tc = await loadTestcontainers();
  try {
    return await bounded(tc.getContainerRuntimeClient(), timeoutMs, 'finding a Docker engine');
  } catch (err) {
    const message = messageOf(err);
    throw new DockerUnavailableError(
      `no Docker engine reachable (${message}); start one with scripts/docker/engine-up.sh and export DOCKER_HOST`,
      { cause: err },
    );
  }
}

/** Whether an engine answers, and if not, why (for skipping tests with a clear message). */
export async function dockerAvailable(
  timeoutMs = 10_000,
): Promise<{ ok: true; client: DockerClient } | { ok: false; reason: string }> {
  try {
    const client = await dockerClient(timeoutMs);
    await bounded(client.container.dockerode.ping(), timeoutMs, 'pinging the Docker engine');
    return { ok: true, client };
  } catch (err) {
    return { ok: false, reason: messageOf(err) };
  }
}

/** Whether the engine has `image` locally (nothing is pulled: there may be no registry). */
export async function imageExists(client: DockerClient, image: string, timeoutMs = 10_000): Promise<boolean> {
  try {
    await bounded(client.container.dockerode.getImage(image).inspect(), timeoutMs, `inspecting ${image}`);
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw err;
  }
}

/** The ids of every container (running or not) carrying all of `labels`. */
export async function listContainersByLabel(
  client: DockerClient,
  labels: Record<string, string>,
  timeoutMs = 10_000,
): Promise<string[]> {
  const filters = { label: Object.entries(labels).map(([k, v]) => `${k}=${v}`) };
  const found = await bounded(
    client.container.dockerode.listContainers({ all: true, filters }),
    timeoutMs,
    'listing containers',
  );
  return found.map((c) => c.Id);
}

/** Force-removes every container carrying all of `labels`; returns how many it removed. */
export async function removeContainersByLabel(
  client: DockerClient,
  labels: Record<string, string>,
  timeoutMs = 30_000,
): Promise<number> {
  const ids = await listContainersByLabel(client, labels, timeoutMs);
  let removed = 0;
  await Promise.all(
    ids.map(async (id) => {
      try {
        await bounded(
          client.container.dockerode.getContainer(id).remove({ force: true, v: true }),
          timeoutMs,
          `removing container ${id.slice(0, 12)}`,
        );
        removed++;
      } catch (err) {
        // Already gone (removed by someone else meanwhile) is what we wanted.
        if ((err as { statusCode?: number }).statusCode !== 404) throw err;
      }
    }),
  );
  return removed;
}

/** Removes every container of a run (labelled with its run id), whoever started it. */
export async function removeRunContainers(runId: string, timeoutMs = 30_000): Promise<number> {
  return removeContainersByLabel(await dockerClient(), { [LABEL_RUN]: runId }, timeoutMs);
}
