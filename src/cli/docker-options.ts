// The `--runtime docker` options `limbo run` and `limbo up` share: image names (each flag
// also read from its LIMBO_*_IMAGE variable, the names dockerImages() reads) and where the
// run's Toxiproxy lives. They become the environment the docker runtime reads its settings
// from, so flags and variables mean the same thing everywhere.
import type { RuntimeChoice, RuntimeName } from '../runtime/service-runtime.js';
import { checkDockerRuntime } from '../runtime/docker-preflight.js';
import { isDeclaredTargetName } from '../targets/registry.js';

export const dockerRunOptions = {
  servicesImage: {
    type: 'string',
    description: 'docker runtime: the services image (default limbo/services:local)',
  },
  toxiproxyImage: {
    type: 'string',
    description:
      'docker runtime: the Toxiproxy image, used when the engine has it (default ghcr.io/shopify/toxiproxy:2.12.0; else the services image runs `limbo proxy`)',
  },
  dockerToxiproxy: {
    type: 'enum',
    values: ['container', 'embedded'] as const,
    default: 'container',
    description: 'docker runtime: Toxiproxy in a container, or embedded in this process (host networking)',
  },
} as const;

export interface DockerRunValues {
  servicesImage?: string | undefined;
  toxiproxyImage?: string | undefined;
  dockerToxiproxy: 'container' | 'embedded';
  prometheusImage?: string | undefined;
  grafanaImage?: string | undefined;
  tracesImage?: string | undefined;
}

/** The environment the docker runtime reads (env with the flags' values written over it). */
export function dockerSettingsEnv(env: NodeJS.ProcessEnv, o: DockerRunValues): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, LIMBO_DOCKER_TOXIPROXY: o.dockerToxiproxy };
  const set = (name: string, value: string | undefined): void => {
    if (value !== undefined && value !== '') out[name] = value;
  };
  set('LIMBO_SERVICES_IMAGE', o.servicesImage);
  set('LIMBO_TOXIPROXY_IMAGE', o.toxiproxyImage);
  set('LIMBO_PROMETHEUS_IMAGE', o.prometheusImage);
  set('LIMBO_GRAFANA_IMAGE', o.grafanaImage);
  set('LIMBO_TRACES_IMAGE', o.tracesImage);
  return out;
}

/**
 * The runtime to start targets on; for docker, checks the engine and the services image first
 * (UsageError → exit 2) — not the services image for a declared target (`targetName`), whose
 * services run their own images.
 */
export async function chooseRuntime(
  name: RuntimeName,
  env: NodeJS.ProcessEnv,
  o: DockerRunValues,
  targetName?: string,
): Promise<RuntimeChoice> {
  if (name === 'local') return { name };
  const settings = dockerSettingsEnv(env, o);
  await checkDockerRuntime(settings, 10_000, targetName === undefined || !isDeclaredTargetName(targetName));
  return { name, env: settings };
}
