// The one interface every target implements (reference, reference:legacy, restate, on the
// local or docker runtime). A target is a static profile (how clients speak to it, the
// signals it lacks, its extra checks and rate caps) and a start: topology + context in, a
// running cluster out, with its ingress URLs, its links (each a Toxiproxy proxy), service
// handles for process faults and the leadership hooks chaos suites need. Faults and the
// runner see only this.
//
//   Target { name, profile } .start(topology, ctx) ─▶ StartedTarget { ingressUrls, links, services, leaderOf, … }
import type { Toxiproxy } from 'toxiproxy-node-client';
import type { Checker } from '../checkers/checker.js';
import type { ServiceLevels } from '../checkers/service-levels.js';
import type { ServiceHandle } from '../runtime/service-handle.js';
import type { RuntimeName } from '../runtime/service-runtime.js';

export type { ServiceHandle } from '../runtime/service-handle.js';
import { referenceClientApi, type ClientApi } from '../workload/client-api.js';
import type { ClientAdapter } from '../workload/client-adapter.js';
import type { WorkloadSpec } from '../workload/workload.js';
import { LimboError } from '../util/errors.js';

export interface Topology {
  processors: number;
  partitions: number;
  ingresses?: number;
  /**
   * The reference ingress's bound on pending requests (`--max-pending`): past it a request is
   * refused with 503 before any work. Default the ingress's own (10,000); other targets ignore it.
   */
  ingressMaxPending?: number;
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
  /** The run's seed: the embedded Toxiproxy draws toxicity from it, so a replay draws the same. */
  seed?: number;
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
  /** Link name → its kind (`client`, `peer`, `storage`, …); unlisted: `client` from the workload, else `peer`. */
  readonly linkKinds?: Readonly<Record<string, string>>;
  /**
   * Each service's named ports, where the target allocates them once for the run (a declared
   * target); absent where services bind port 0 anew at each start (the proxies' upstreams say where).
   */
  readonly ports?: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly toxiproxy: Toxiproxy;
  readonly toxiproxyUrl: string;
  /** Every service by name (`log`, `processor-1`, `ingress-1`, …). */
  readonly services: ReadonlyMap<string, ServiceHandle>;
  /** Metrics endpoints to scrape besides the services' (e.g. the Toxiproxy server's). */
  extraMetricsUrls(): Record<string, string>;
  /** The node currently leading a partition, as the controller says. */
  leaderOf(partition: number): Promise<string | undefined>;
  /**
   * When leaderOf found nobody: what each service was asked and said, in one line (a declared
   * target's probe that never matches is named, not only "no known leader"). Optional.
   */
  explainNoLeader?(partition: number): Promise<string>;
  transferLeadership(partition: number, node: string): Promise<void>;
  /** How long transferLeadership may take, when the target bounds it itself (a declared command's timeoutMs). */
  readonly transferLeadershipBoundMs?: number;
  /** Starts the processors if they were deferred (clients-before-processors); else no-op. */
  startProcessors(): Promise<void>;
  /**
   * Invocation ids the target assigned to idempotency keys whose call never named one (e.g. a
   * hung call), asked after the run so the verdict names real invocations; bounded. Targets
   * whose ingress names every invocation in its answer leave it out.
   */
  resolveInvocationIds?(idempotencyKeys: readonly string[]): Promise<Map<string, string>>;
  /**
   * What the server says of the invocations it knows (by invocation id), for history ↔ server
   * reconciliation on targets that export no spans (e.g. Restate's `sys_invocation` status,
   * learnt while resolving ids). Read once, after resolveInvocationIds.
   */
  serverInvocations?(): ReadonlyMap<string, { status: string; source: string }>;
  stop(): Promise<void>;
}

/**
 * What the testbed knows of a target before it starts, and what never changes while it runs:
 * how clients speak to it, which canonical signals it cannot give, what else to keep from its
 * scrapes, the checks every run on it gets, and the load it can take.
 */
export interface TargetProfile {
  /** How clients speak to this target's ingress. */
  readonly clientApi: ClientApi;
  /** The target's own client in any protocol: when set, ops go through it, not over HTTP. */
  readonly clientAdapter?: ClientAdapter;
  /**
   * Canonical signals (limbo metric names) this target cannot provide, with the reason:
   * checkers that need only these are skipped with that reason, never passed or failed.
   */
  readonly missingSignals: Readonly<Record<string, string>>;
  /**
   * Checks whose premise this target does not share (check name → why, e.g. a store without
   * idempotency keys for idempotentRetriesAgree): skipped with that reason wherever a suite or
   * explore asks for them.
   */
  readonly inapplicableChecks: Readonly<Record<string, string>>;
  /** Metrics to keep from its scrapes besides limbo_* and toxiproxy_* (e.g. the server's own). */
  keepMetric(name: string): boolean;
  /** Checks every run on this target gets (e.g. its leadership timeline). */
  readonly extraCheckers: readonly Checker[];
  /** Caps this target puts on any suite's workload (e.g. a rate the machine can take). */
  readonly workloadLimits: Pick<WorkloadSpec, 'maxRatePerSec'>;
  /** Its service levels under faults: every run on it gets the serviceLevels check against them. */
  readonly slo?: ServiceLevels;
}

/** What a suite's faults need of a target (faults/selectors.ts derives them from a schedule). */
export type TargetRequirement =
  | { kind: 'service'; name: string }
  | { kind: 'role'; role: string }
  | { kind: 'leader' }
  | { kind: 'link'; name: string }
  | { kind: 'linkInto' }
  /** A link of this dialer's own (`ingress->…`), not one every dialer shares. */
  | { kind: 'linkFrom'; from: string }
  | { kind: 'transferLeadership' }
  /** A fault hook inside a service (the reference cluster's POST /limbo/faults), by name. */
  | { kind: 'faultHook'; hook: string }
  /** A service that may lose its data dir and still be correct (declared `dataLoss: 'survives'`). */
  | { kind: 'dataLoss'; service?: string };

/** A target's links and services known before it starts (declared targets), for explore. */
export interface TargetShape {
  links: readonly string[];
  services: readonly { name: string; role: string }[];
}

/** The profile of the reference cluster, and of any target that speaks its ingress API with every signal. */
export const referenceProfile: TargetProfile = {
  clientApi: referenceClientApi,
  missingSignals: {},
  inapplicableChecks: {},
  keepMetric: () => false,
  extraCheckers: [],
  workloadLimits: {},
};

export interface Target {
  readonly name: string;
  readonly shape?: TargetShape;
  /** The runtime its services start on (default local). */
  readonly runtime?: RuntimeName;
  /** Its static profile (default: the reference cluster's). */
  readonly profile?: TargetProfile;
  start(topology: Topology, ctx: TargetContext): Promise<StartedTarget>;
  /**
   * Why a schedule of these faults cannot run here (a service, role, link or leadership the
   * target lacks), so the suite is skipped with the reason before anything starts.
   */
  unsupported?(needs: readonly TargetRequirement[]): string | undefined;
}

/** A target's profile, the reference cluster's when it declares none. */
export function profileOf(target: Target): TargetProfile {
  return target.profile ?? referenceProfile;
}

export class TargetError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_TARGET', message, options);
  }
}
