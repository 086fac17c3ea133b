// Before `--runtime docker` starts anything: is there an engine, and does it have the services
// image? Neither can be fixed by limbo (no registry to pull from), so a missing one is a usage
// error (exit 2) naming the script that makes it, rather than a failed run.
import { UsageError } from '../util/errors.js';
import { dockerAvailable, imageExists } from './docker-engine.js';
import { dockerImages } from './docker-images.js';

export async function checkDockerRuntime(
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 10_000,
  /** false for a declared target: its services run their own images (it checks them itself). */
  servicesImage = true,
): Promise<void> {
  const engine = await dockerAvailable(timeoutMs);
  if (!engine.ok) {
    const reason = engine.reason.split('\n')[0] ?? engine.reason;
    throw new UsageError(
      `--runtime docker: ${reason}` +
        (reason.includes('engine-up.sh')
          ? ''
          : '\n  start one: scripts/docker/engine-up.sh, then export DOCKER_HOST (the line it prints)'),
    );
  }
  const image = dockerImages(env).services;
  if (servicesImage && !(await imageExists(engine.client, image, timeoutMs)))
    throw new UsageError(
      `--runtime docker: the engine has no image ${image}\n` +
        '  build it: scripts/docker/base-image.sh && scripts/docker/build-image.sh (or set LIMBO_SERVICES_IMAGE / --services-image)',
    );
}
