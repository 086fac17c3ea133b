// The declarative target form: a system described as data (services, the links between them,
// how clients call it, who leads, which of its metrics are limbo's signals), so limbo can
// start it, put a Toxiproxy proxy on every link and run every standard suite against it
// without a line of target code. `defineTarget({...})` in a `*.limbo.ts` file is the whole
// interface; validate.ts checks it, target.ts turns it into the runner's Target.
//
//   targets/etcd.limbo.ts ─defineTarget─▶ TargetDeclaration ─validate─▶ declarativeTarget() ─▶ Target
//
// Templates (in args, env, URLs) are filled in at start, once limbo knows the addresses:
//   {{port:NAME}}          this service's own port NAME (limbo picks free ports once per run)
//   {{addr:SERVICE.PORT}}  127.0.0.1:<port> of another service, directly (no proxy)
//   {{link:FROM->TO}}      the listen address (host:port) of that link's proxy: how a dialer
//                          reaches TO through limbo (`*` as FROM: one proxy every dialer shares)
//   {{linkport:FROM->TO}}  that listen address's port alone (for a system that takes a bare port)
//   {{name}} {{dataDir}} {{runDir}}
import type { ServiceRole } from '../../protocol/names.js';
import type { ClientApi } from '../../workload/client-api.js';
import type { ClientAdapter } from '../../workload/client-adapter.js';
import type { ServiceLevels } from '../../checkers/service-levels.js';

/** How limbo knows a service (or a probe) is ready: one of these, bounded by readyTimeoutMs. */
export type WaitStrategy =
  /** A GET (or `method`) that answers `status` (default any 2xx), its body containing `bodyIncludes`. */
  | { http: string; method?: string; body?: unknown; status?: number; bodyIncludes?: string }
  /** A TCP connect to host:port succeeds. */
  | { tcp: string }
  /** A line of the service's output matches this regular expression. */
  | { logLine: string };

export interface ServiceDeclaration {
  /** Unique; letters, digits, '-', '_'. Links, faults and the run's logs name it. */
  name: string;
  /**
   * Its part, in limbo's canonical roles: `ingress` (answers clients), `processor` (holds
   * leadership; leaderOf selects among these), `log` (storage). Suites select by role.
   */
  role: ServiceRole;
  /** Local runtime: the program (found on PATH or an absolute path), its arguments and environment. */
  command?: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  /**
   * Docker runtime: the image, run on the host network with `args` as its command (the image's
   * entrypoint runs them; `command` is for the local runtime), `env` added to limbo's and
   * OpenTelemetry's variables, `{{dataDir}}` bind-mounted at the same path. The engine must
   * already have it (no registry is reached).
   */
  image?: string;
  /** Named ports limbo allocates for it (free, fixed for the run, kept across restarts). */
  ports?: readonly string[];
  /** `keep` (default): `{{dataDir}}` survives restarts, as a disk would; `fresh`: wiped before each start. */
  dataDir?: 'keep' | 'fresh';
  /**
   * `survives`: the service may lose its `{{dataDir}}` and stay correct (it rebuilds from its
   * peers), so the `data-loss-restart` fault may wipe it and restart it. Absent: never offered.
   */
  dataLoss?: 'survives';
  /**
   * How long a graceful stop (a restart, the run's end) waits after SIGTERM before SIGKILL;
   * default 3 s. A system that drains on SIGTERM for longer (Redis waits for its replicas up to
   * its shutdown-timeout) declares it, or gracefulStops reports its stops as killed.
   */
  stopGraceMs?: number;
  ready: WaitStrategy;
  /** Its Prometheus /metrics URL (templated). */
  metrics?: string;
  /** Services that must be ready before this one starts; the rest start together. */
  startAfter?: readonly string[];
}

export interface LinkDeclaration {
  /** The dialer: a service name, `client` (the workload), or `*` (every dialer shares the proxy). */
  from: string;
  /** The service dialed. */
  to: string;
  /** Which of `to`'s named ports it dials. */
  port: string;
  /**
   * What it carries, for selectors and `isolate` (`linkInto(x, { kind: 'peer' })`): a word
   * such as `client`, `peer`, `storage`. Default: `client` for links from the client, else `peer`.
   */
  kind?: string;
}

/**
 * The client side, one of: `api`, for a system clients reach over HTTP (a built-in API by
 * name, or an HTTP API of your own); `adapter`, for any other protocol (code that performs
 * each op over its own connections, made with defineClientAdapter).
 */
export interface ClientDeclaration {
  api?: 'reference' | 'restate' | ClientApi;
  adapter?: ClientAdapter;
  /** Readiness of the whole target: this op succeeds through every client link (default: a call). */
  probe?: false;
  /** A cap on the workload's op rate that this system on this machine can take. */
  maxRatePerSec?: number;
}

/**
 * "I lead" when the value at `jsonPath` (dots; a number indexes an array) equals the one at
 * `equalsJsonPath`, or `equals` — a string there is a template of the asked service's own,
 * e.g. `'{{name}}'` when the system names its leader.
 */
export interface LeaderWhen {
  jsonPath: string;
  equalsJsonPath?: string;
  equals?: unknown;
}

/** Who leads: asked of every running `processor` service (each ask bounded to 1.5 s). */
export type LeadershipDeclaration =
  | {
      /**
       * One group leads everything (etcd, any single raft group): leaderOf(any partition) is
       * the service whose answer here says "I lead".
       */
      http: { port: string; path: string; method?: string; body?: unknown };
      leaderWhen: LeaderWhen;
    }
  | {
      /**
       * A command run for each processor, its arguments' templates filled in as that service's
       * (`{{port:client}}`, `{{name}}` …): it says "I lead" by exiting 0, or — with leaderWhen
       * — by printing JSON that says so. One group leads everything, as for http.
       */
      command: string;
      args?: readonly string[];
      leaderWhen?: LeaderWhen;
      /**
       * The exit code by which the command says it got no answer from its service (a paused
       * or unreachable node): no sample, as for an HTTP probe that times out, rather than
       * "not me". Without it every non-zero exit is "not me".
       */
      noAnswerExit?: number;
    }
  | {
      /** The service whose /metrics has this gauge at 1 leads (for the partition, with `partitionLabel`). */
      metric: string;
      /** The label naming the partition (per-partition leadership); without it, one group leads all. */
      partitionLabel?: string;
    };

/**
 * Moving leadership on purpose (the `transfer-leadership` fault): a command run once per
 * transfer, with the current and the next leader in its templates besides the usual ones
 * (`{{port:NAME}}`, `{{name}}`, … are the current leader's):
 *   {{leader}} {{next}}            the services' names
 *   {{leader:PORT}} {{next:PORT}}  127.0.0.1:<port> of that service's port PORT, directly (no proxy)
 * It must exit 0; the transfer is done once the leadership probe names `next`.
 */
export interface LeadershipTransferDeclaration {
  command: string;
  args?: readonly string[];
  /** Bound on the command and on the probe naming the next leader (default 10 s). */
  timeoutMs?: number;
}

/** A canonical limbo signal as one of the system's own metrics, or missing with the reason. */
export type SignalDeclaration =
  | { metric: string; note?: string }
  /**
   * Read from a JSON endpoint of each service (a system without Prometheus): `json` is the URL,
   * templated as that service's own (`http://127.0.0.1:{{port:monitor}}/jsz`; a service whose
   * template does not fill has none), `path` the value in the answer (dots, numbers index
   * arrays: `account_details.0.stream_detail.0.cluster.leader`). A number is taken as it is, a
   * boolean as 1/0, a numeric string as its number; with `equals` (templates filled, e.g.
   * `'{{name}}'`) or `equalsPath` the sample is 1 when the value equals it, else 0. Each
   * sample gets `node="<service>"` and `labels`; limbo_processor_is_leader also
   * `partition="0"` unless `labels` names one (one group leads everything).
   */
  | {
      json: string;
      path: string;
      equals?: unknown;
      equalsPath?: string;
      labels?: Readonly<Record<string, string>>;
      note?: string;
    }
  /** The system already serves it under limbo's name (a limbo-instrumented system). */
  | { native: true }
  | { missing: string };

export interface TargetDeclaration {
  name: string;
  /** One or two sentences: what the system is and how it is laid out. */
  about: string;
  services: readonly ServiceDeclaration[];
  links: readonly LinkDeclaration[];
  client: ClientDeclaration;
  /**
   * Who leads. Where `signals` maps no metric to limbo_processor_is_leader or
   * limbo_processor_leadership_changes_total, limbo derives them from this probe, asked of every
   * running processor twice a second (a command: once a second).
   */
  leadership?: LeadershipDeclaration;
  /** How to move leadership on purpose; without it, suites that transfer leadership are skipped. */
  leadershipTransfer?: LeadershipTransferDeclaration;
  /**
   * Keys: limbo metric names (`limbo_processor_leadership_changes_total`, …). Unlisted ones are
   * missing (but for the two the leadership probe gives).
   */
  signals?: Readonly<Record<string, SignalDeclaration>>;
  /**
   * Checks that do not apply to this system's semantics, each with the reason (check name →
   * why): runs and explore skip them and say why, instead of failing on a premise the system
   * never made.
   */
  inapplicableChecks?: Readonly<Record<string, string>>;
  /** Bound on each service's readiness (default 20 s). */
  readyTimeoutMs?: number;
  /**
   * Its service levels under faults (failover, p99 during a fault net of what the fault
   * imposes, recovery after the heal): every run on it gets the serviceLevels check. Say in
   * `basis` where the numbers come from (its timeouts, its documentation).
   */
  slo?: ServiceLevels;
}

export interface DeclaredTarget extends TargetDeclaration {
  readonly kind: 'limbo-target-declaration';
}

export function isDeclaredTarget(x: unknown): x is DeclaredTarget {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'limbo-target-declaration';
}

/** Marks a declaration (validated when loaded, where the file's name can be said). */
export function defineTarget(declaration: TargetDeclaration): DeclaredTarget {
  return { ...declaration, kind: 'limbo-target-declaration' };
}

/** A link's name, as suites and the report say it. */
export const linkName = (l: Pick<LinkDeclaration, 'from' | 'to'>): string => `${l.from}->${l.to}`;
