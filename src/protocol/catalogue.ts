// The built-in services of the reference cluster. The ingress checks names against this
// catalogue (unknown service or handler → 404) before anything reaches a processor;
// the processors hold the implementations.

export interface ServiceInfo {
  /** Keyed services (virtual objects) run one invocation per key at a time, in log order. */
  keyed: boolean;
  handlers: readonly string[];
}

export const catalogue: Readonly<Record<string, ServiceInfo>> = {
  Echo: { keyed: false, handlers: ['echo'] },
  Sleep: { keyed: false, handlers: ['sleep'] },
  Counter: { keyed: true, handlers: ['add', 'get'] },
  Flaky: { keyed: false, handlers: ['call'] },
};

export function lookupHandler(service: string, handler: string): ServiceInfo | undefined {
  const info = Object.hasOwn(catalogue, service) ? catalogue[service] : undefined;
  return info?.handlers.includes(handler) ? info : undefined;
}
