// Toxiproxy for the docker runtime: the official image when the engine has it (it cannot
// pull one without a registry), else the services image running `limbo proxy`, the
// embedded Toxiproxy-compatible server. Either way a container on the host network whose
// ready info names the API URL (`addresses.api`).
//
//   image present? ─yes─▶ toxiproxy-server -host 127.0.0.1 -port <free port> (ready: its start log line)
//                  └no──▶ limbo proxy --port 0                           (ready: the limbo-ready line)
import { freePort } from '../launch/free-ports.js';
import type { ReadyInfo } from '../launch/ready.js';
import { dockerClient, imageExists } from './docker-engine.js';
import { dockerImages } from './docker-images.js';
import { startContainer, type ContainerOptions, type StartedContainer } from './docker.js';

export interface ProxyContainerOptions extends Omit<
  ContainerOptions,
  'image' | 'command' | 'entrypoint' | 'readyLog' | 'matchReady'
> {
  /** Force one implementation; default: `toxiproxy` when its image is present, else `limbo`. */
  implementation?: 'toxiproxy' | 'limbo';
  /** The seed of `limbo proxy`'s toxicity draws (Toxiproxy 2.12 has no seed). */
  seed?: number;
}

export interface StartedProxyContainer extends StartedContainer {
  readonly implementation: 'toxiproxy' | 'limbo';
  /** The Toxiproxy HTTP API, e.g. http://127.0.0.1:8474. */
  readonly apiUrl: string;
}

const TOXIPROXY_READY = /Starting Toxiproxy HTTP server|API HTTP server starting/;

export async function startProxyContainer(
  options: ProxyContainerOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<StartedProxyContainer> {
  const images = dockerImages(env);
  const implementation =
    options.implementation ??
    ((await imageExists(await dockerClient(), images.toxiproxy)) ? 'toxiproxy' : 'limbo');
  const { implementation: _, seed, ...rest } = options;
  let started: StartedContainer;
  if (implementation === 'toxiproxy') {
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    started = await startContainer({
      ...rest,
      image: images.toxiproxy,
      command: ['-host=127.0.0.1', `-port=${port}`],
      readyLog: TOXIPROXY_READY,
      matchReady: (line): ReadyInfo | undefined =>
        TOXIPROXY_READY.test(line)
          ? { role: 'toxiproxy', node: options.name, pid: 0, addresses: { api, metrics: `${api}/metrics` } }
          : undefined,
    });
  } else {
    started = await startContainer({
      ...rest,
      image: images.services,
      command: ['proxy', '--port', '0', ...(seed !== undefined ? ['--seed', String(seed)] : [])],
    });
  }
  // The API URL follows the current incarnation (a restart of `limbo proxy` binds anew).
  Object.defineProperty(started, 'implementation', { value: implementation, enumerable: true });
  Object.defineProperty(started, 'apiUrl', { get: () => started.ready.addresses.api, enumerable: true });
  return started as StartedProxyContainer;
}
