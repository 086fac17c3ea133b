// What every service role of the reference cluster looks like to `limbo serve` and to
// tests that host a service in-process: options in, a started service out.
import type { Logger } from '../telemetry/logger.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { OptionSpecs, ParsedOptions } from '../util/options.js';

export interface StartedService extends AsyncDisposable {
  readonly role: string;
  readonly node: string;
  /** Named endpoints (grpc, http, metrics …) as host:port or URLs. */
  readonly addresses: Record<string, string>;
  stop(): Promise<void>;
}

export interface ServiceContext {
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** The process's tracing for a node (limbo serve: through the NodeSDK); default: the service's own. */
  tracingFor?: (node: string) => Tracing;
}

export interface RoleDefinition<S extends OptionSpecs = OptionSpecs> {
  role: string;
  description: string;
  options: S;
  start(options: ParsedOptions<S>, context: ServiceContext): Promise<StartedService>;
}

/** Keeps the option types of a role definition while letting the registry hold any role. */
export function defineRole<S extends OptionSpecs>(definition: RoleDefinition<S>): RoleDefinition {
  return definition;
}
