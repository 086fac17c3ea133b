// The data of one run, shared by everything downstream of the runner: the workload writes
// history ops, observers write series, the fault scheduler writes fault windows, the runner
// writes phase times; checkers and the report read only this. Times are milliseconds on
// the run's monotonic clock (0 = run start); wall times are ISO strings for humans.
//
//   workload ─▶ history ┐
//   observers ─▶ series ├─▶ RunData ─▶ checkers ─▶ verdicts ─▶ report
//   faults ─▶ windows   ┘
//   runner ─▶ phases ───┘
import type { RunSpan } from './spans.js';

export { spanRunMs, type OpenSpanMark, type RunSpan } from './spans.js';

/** What a client op does (docs/architecture.md#ingress). */
/** `attach` is only the runner's final attach to an acknowledged invocation (request.final). */
export type OpKind = 'call' | 'send' | 'counterAdd' | 'counterGet' | 'idempotentRetry' | 'attach';

/** Jepsen's op types: every op is an invoke followed by exactly one ok | fail | info. */
export type OpType = 'invoke' | 'ok' | 'fail' | 'info';

/** Error codes a client records on fail / info, so checkers can branch on them. */
export type OpErrorCode =
  | 'client_timeout'
  | 'connection_error'
  | 'http_status'
  | 'deadline_exceeded'
  | 'bad_response'
  | 'aborted'
  /** A declared target's client adapter said the op failed or may not have taken effect. */
  | 'target_error';

export interface OpRequest {
  method: string;
  path: string;
  body?: unknown;
  idempotencyKey?: string;
  /** Counter key for counterAdd / counterGet. */
  counterKey?: string;
  /** Counter delta for counterAdd. */
  delta?: number;
  /**
   * Set on the runner's final reads after convergence: of every counter, and the attach to
   * each acknowledged invocation.
   */
  final?: boolean;
}

export interface OpResponse {
  status?: number;
  body?: unknown;
  /** For a counter op: the counter value the ingress answered with. */
  value?: number;
}

export interface OpError {
  code: OpErrorCode;
  message: string;
}

export interface HistoryOp {
  type: OpType;
  /** Pairs an invoke with its completion: unique in the run. */
  opId: number;
  /** The client (Jepsen "process") that issued the op. */
  process: number;
  kind: OpKind;
  /** Known before the call for idempotent ops, else from the answer. */
  invocationId?: string;
  traceId?: string;
  /** On invoke (and repeated on the completion for convenience). */
  request?: OpRequest;
  /** On ok / fail / info. */
  response?: OpResponse;
  error?: OpError;
  /** Monotonic ms since run start. */
  timeMs: number;
  wallTime: string;
}

export interface SeriesSample {
  /** The service the sample was scraped from, e.g. `ingress-1`. */
  service: string;
  name: string;
  labels: Record<string, string>;
  tMs: number;
  value: number;
}

export interface FaultWindow {
  /** The fault's registry name, e.g. `kill`, `latency`, `link-down`. */
  fault: string;
  /** What it was applied to, as written in the schedule after selection: a link or service. */
  target: string;
  /** Links (proxy names) and services the fault hurts, for checkers. */
  affects: string[];
  /** True when the target was chosen as a partition leader (leaderOf). */
  leader?: boolean;
  injectedAtMs: number;
  /** Undefined if the heal never happened (a bug, reported by the runner). */
  healedAtMs?: number;
  details?: Record<string, unknown>;
  /** What the fault met on its own proxies while it was in (read from the proxies' counters). */
  evidence?: FaultEvidence;
}

/**
 * A fault's own evidence of having landed: the proxies it had to meet traffic on, and what
 * they counted between its inject and its heal (faultsHitTraffic judges each fault on this).
 */
export interface FaultEvidence {
  /** The faulted link's proxy, or every proxy into and out of a faulted service. */
  proxies: string[];
  /** The byte directions that count: a toxic's own stream, or both. */
  directions: string[];
  /** Bytes those proxies read in those directions inside the window. */
  bytes: number;
  /** Connections dialled into those proxies inside the window (absent: the server does not count them). */
  connectionsOpened?: number;
  /** Connections on them closed as the fault went in (cut by a link down, a kill, a restart). */
  connectionsCut?: number;
  /** `around`: traffic in the second before the inject counts too (a process fault: did it hold work?). */
  look?: 'around';
  /** Why there are no counts (the proxies' /metrics could not be read). */
  unavailable?: string;
  /** A fault inside a service: its fault hook, and the work the hook acted on while it was in. */
  hook?: string;
  hookHits?: number;
  /** Why the hook's count could not be read (the service had gone away). */
  hookHitsUnavailable?: string;
}

export interface PhaseTimes {
  startedAtWall: string;
  warmupStartMs?: number;
  chaosStartMs?: number;
  /** End of the chaos phase: the final heal starts here. */
  chaosEndMs?: number;
  /** When the final heal (every fault removed) finished. */
  healedAtMs?: number;
  /** End of the bounded convergence wait: ops still open now are hung. */
  deadlineMs?: number;
  endedAtMs?: number;
}

export interface RunData {
  suite: string;
  target: string;
  seed: number;
  phases: PhaseTimes;
  history: HistoryOp[];
  series: SeriesSample[];
  faults: FaultWindow[];
  /** The run's Prometheus and what PromQL assertions got from it (absent: no Prometheus). */
  prometheus?: RunPrometheusData;
  /** Every span of the run, ended and open (absent: the run was not traced). */
  spans?: RunSpan[];
  /** Spans the run's receiver could not keep (over its bound): trace checks say so. */
  spansDropped?: number;
  /** What the server said of invocations it knows, by id (targets without spans, e.g. Restate). */
  serverInvocations?: Record<string, { status: string; source: string }>;
}

/** The run's Prometheus, and every PromQL assertion's query evaluated before it stopped. */
export interface RunPrometheusData {
  /** Its URL while the run lasted; undefined when the run had none (see `missing`). */
  url?: string;
  /** Its TSDB directory, kept after the run. */
  dataDir?: string;
  /** Why the run had no Prometheus, e.g. `--prometheus off`. */
  missing?: string;
  evaluations: PromqlEvaluation[];
}

/** A PromQL query a check needs answered: at the deadline ('end') or every 1 s from the chaos start ('range'). */
export interface PromqlQuery {
  query: string;
  at: 'end' | 'range';
}

/** One PromQL query as Prometheus answered it, at one instant ('end') or over a range. */
export interface PromqlEvaluation {
  query: string;
  at: 'end' | 'range';
  /** Wall times (ISO): the instant, or the range's ends; the step is 1 s. */
  startWall: string;
  endWall: string;
  /** Every series with its values ([unix seconds, value]; NaN as NaN). */
  series: { metric: Record<string, string>; values: [number, number][] }[];
  /** Prometheus refused or failed the query; errorType `bad_data` means the PromQL is wrong. */
  error?: { type: string; message: string };
}

/** An op with its completion, for checkers. `end` is undefined if the op never ended. */
export interface PairedOp {
  invoke: HistoryOp;
  end?: HistoryOp;
}

/** Pairs every invoke with its completion by opId, in invoke order. */
export function pairOps(history: readonly HistoryOp[]): PairedOp[] {
  const byId = new Map<number, PairedOp>();
  const out: PairedOp[] = [];
  for (const op of history) {
    if (op.type === 'invoke') {
      const pair: PairedOp = { invoke: op };
      byId.set(op.opId, pair);
      out.push(pair);
    } else {
      const pair = byId.get(op.opId);
      if (pair !== undefined && pair.end === undefined) pair.end = op;
    }
  }
  return out;
}

/** The invocation id of an op, from its completion if the answer carried one. */
export function invocationIdOf(pair: PairedOp): string | undefined {
  return pair.end?.invocationId ?? pair.invoke.invocationId;
}

/** The end of the run's observation: the deadline if set, else the last thing recorded. */
export function runEndMs(run: RunData): number {
  if (run.phases.deadlineMs !== undefined) return run.phases.deadlineMs;
  let end = run.phases.endedAtMs ?? 0;
  for (const op of run.history) end = Math.max(end, op.timeMs);
  for (const s of run.series) end = Math.max(end, s.tMs);
  return end;
}

/** The moment the final heal finished (or the last fault healed, or the chaos end). */
export function finalHealMs(run: RunData): number | undefined {
  if (run.phases.healedAtMs !== undefined) return run.phases.healedAtMs;
  let heal: number | undefined;
  for (const f of run.faults) {
    if (f.healedAtMs !== undefined) heal = Math.max(heal ?? 0, f.healedAtMs);
  }
  return heal ?? run.phases.chaosEndMs;
}
