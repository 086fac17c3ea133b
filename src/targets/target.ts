// The one interface every target implements (reference, reference:legacy, later restate, on
// the local or docker runtime): topology + context in, a started cluster out, with its ingress
// URLs, its links (each a Toxiproxy proxy), service handles for process faults and the
// leadership hooks chaos suites need. Faults and the runner see only this.
//
//   Target.start(topology, ctx) ─▶ StartedTarget { ingressUrls, links, services, leaderOf, … }
import type { Toxiproxy } from 'toxiproxy-node-client';
import type { Checker } from '../checkers/checker.js';
import type { ServiceRole } from '../protocol/names.js';
import type { RuntimeName } from '../runtime/service-runtime.js';
import type { ClientApi } from '../workload/client-api.js';
import type { WorkloadSpec } from '../workload/workload.js';

export interface Topology {
  processors: number;
  partitions: number;
  ingresses?: number;
}

export interface TargetContext {
  /** The run directory; services log into `<runDir>/logs/<service>.log`. */
  runDir: string;
  /** A Toxiproxy API URL to use instead of starting the embedded server. */
  toxiproxyUrl?: string;
  /** Start everything but the processors (they start when `startProcessors` is called). */
  deferProcessors?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Bound on each service's start-up. */
  readyTimeoutMs?: number;
}

export interface ServiceHandle {
  readonly name: string;
  /** `endpoint`: a target's service deployment (e.g. Restate's SDK endpoint). */
  readonly role: ServiceRole | 'toxiproxy' | 'endpoint';
  isRunning(): boolean;
  /** Its PID on this host; undefined when not running, or in a container. */
  pid(): number | undefined;
  /** The service's current /metrics URL (changes across restarts), if it is running. */
  metricsUrl(): string | undefined;
  /** kill -9 (a container: SIGKILL to it); resolves once it has exited. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT (a container: docker pause / unpause). */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Starts it again with the same arguments and data (stopping it first if it runs). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartedTarget extends AsyncDisposable {
  readonly name: string;
  /** Where its services run (default local). */
  readonly runtime?: RuntimeName;
  /** What serves its Toxiproxy API, for messages. */
  readonly toxiproxyDescription?: string;
  readonly ingressUrls: readonly string[];
  /** Link name (`client->ingress`, `ingress->processor-1`, …) → Toxiproxy proxy name. */
  readonly links: Readonly<Record<string, string>>;
  readonly toxiproxy: Toxiproxy;
  readonly toxiproxyUrl: string;
  /** Every service by name (`log`, `processor-1`, `ingress-1`, …). */
  readonly services: ReadonlyMap<string, ServiceHandle>;
  /** Metrics endpoints to scrape besides the services' (e.g. the Toxiproxy server's). */
  extraMetricsUrls(): Record<string, string>;
  /** The node currently leading a partition, as the controller says. */
  leaderOf(partition: number): Promise<string | undefined>;
  transferLeadership(partition: number, node: string): Promise<void>;
  /** Starts the processors if they were deferred (clients-before-processors); else no-op. */
  startProcessors(): Promise<void>;
  /** How clients speak to this target's ingress (default: the reference ingress's API). */
  readonly clientApi?: ClientApi;
  /**
   * Canonical signals (limbo metric names) this target cannot provide, with the reason:
   * checkers that need only these are skipped with that reason, never passed or failed.
   */
  readonly missingSignals?: Readonly<Record<string, string>>;
  /** Metrics to keep from its scrapes besides limbo_* and toxiproxy_* (e.g. the server's own). */
  keepMetric?(name: string): boolean;
  /** Checks every run on this target gets (e.g. its leadership timeline). */
  readonly extraCheckers?: readonly Checker[];
  /**
   * Invocation ids the target assigned to idempotency keys whose call never named one (e.g. a
   * hung call), asked after the run so the verdict names real invocations; bounded.
   */
  resolveInvocationIds?(idempotencyKeys: readonly string[]): Promise<Map<string, string>>;
  /** Caps this target puts on any suite's workload (e.g. a rate the machine can take). */
  readonly workloadLimits?: Pick<WorkloadSpec, 'maxRatePerSec'>;
  stop(): Promise<void>;
}

/** A target's links and services known before it starts (declared targets), for explore. */
export interface TargetShape {
  links: readonly string[];
  services: readonly { name: string; role: string }[];
}

export interface Target {
  readonly name: string;
  readonly shape?: TargetShape;
  /** The runtime its services start on (default local). */
  readonly runtime?: RuntimeName;
  start(topology: Topology, ctx: TargetContext): Promise<StartedTarget>;
  /**
   * Why a schedule of these faults cannot run here (a service, role, link or leadership the
   * target lacks), so the suite is skipped with the reason before anything starts.
   */
  unsupported?(faults: readonly { name: string; describe: string }[]): string | undefined;
}

export class TargetError extends Error {
  readonly code = 'E_TARGET';
}
