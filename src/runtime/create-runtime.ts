// Picks the runtime of a choice. Its own module, so the runtimes can import the seam's types
// (service-runtime.ts) without a cycle back through this loader.
import type { RuntimeChoice, RuntimeName, ServiceRuntime } from './service-runtime.js';

/** The runtime for a choice; docker is loaded on demand (the local runtime never loads testcontainers). */
export async function createRuntime(choice: RuntimeName | RuntimeChoice): Promise<ServiceRuntime> {
  const c = typeof choice === 'string' ? { name: choice } : choice;
  if (c.name === 'docker')
    return (await import('./docker-runtime.js')).createDockerRuntime(
      c.env !== undefined ? { env: c.env } : {},
    );
  return (await import('./local.js')).localRuntime();
}
