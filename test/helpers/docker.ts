// For tests that need a Docker engine: whether one answers and has the services image,
// else a clear reason to skip. With LIMBO_DOCKER_REQUIRED=1 (scripts/docker/ci.sh) a
// missing engine or image fails the run instead of skipping it.
import { dockerAvailable, dockerImages, imageExists } from '../../src/runtime/docker.js';

export interface DockerTestEnv {
  /** A reason to skip, or false when the engine and image are there. */
  skip: string | false;
  image: string;
}

export async function dockerTestEnv(env: NodeJS.ProcessEnv = process.env): Promise<DockerTestEnv> {
  const image = dockerImages(env).services;
  let skip: string | false = false;
  const engine = await dockerAvailable(5000);
  if (!engine.ok) skip = engine.reason.split('\n')[0]!;
  else if (!(await imageExists(engine.client, image)))
    skip = `image ${image} is missing: run scripts/docker/build-image.sh`;
  if (skip && env.LIMBO_DOCKER_REQUIRED === '1') throw new Error(`LIMBO_DOCKER_REQUIRED=1 but ${skip}`);
  return { skip, image };
}
