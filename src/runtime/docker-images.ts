// The images the docker runtime starts, each overridable from the environment, so a
// machine with a registry can use published images and one without (docs/architecture.md#runtimes)
// can use the ones scripts/docker/ builds locally.
export interface DockerImages {
  /** This project's Dockerfile: every `limbo serve <role>`. */
  services: string;
  toxiproxy: string;
  prometheus: string;
  grafana: string;
  /** An OTLP trace backend with a UI (Jaeger all-in-one). */
  traces: string;
}

export const defaultImages: Readonly<DockerImages> = {
  services: 'limbo/services:local',
  toxiproxy: 'ghcr.io/shopify/toxiproxy:2.12.0',
  prometheus: 'prom/prometheus:v2.42.0',
  grafana: 'grafana/grafana:11.3.0',
  traces: 'jaegertracing/all-in-one:1.62.0',
};

const envNames: Record<keyof DockerImages, string> = {
  services: 'LIMBO_SERVICES_IMAGE',
  toxiproxy: 'LIMBO_TOXIPROXY_IMAGE',
  prometheus: 'LIMBO_PROMETHEUS_IMAGE',
  grafana: 'LIMBO_GRAFANA_IMAGE',
  traces: 'LIMBO_TRACES_IMAGE',
};

/** The default images, each replaced by its `LIMBO_*_IMAGE` variable when that is set. */
export function dockerImages(env: NodeJS.ProcessEnv = process.env): DockerImages {
  const out = { ...defaultImages };
  for (const key of Object.keys(envNames) as (keyof DockerImages)[]) {
    const value = env[envNames[key]]?.trim();
    if (value) out[key] = value;
  }
  return out;
}

/** Which environment variable overrides which image, for help texts and docs/docker.md. */
export const imageEnvNames: Readonly<Record<keyof DockerImages, string>> = envNames;
