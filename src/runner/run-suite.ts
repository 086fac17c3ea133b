// One suite run, phase by phase (DESIGN.md §3):
//
//   start ─▶ warm-up ─▶ chaos ─▶ heal ─▶ converge ─▶ check ─▶ report
//   target    workload   schedule  final    bounded    pure      run dir
//   + scraper + runner   of faults heal     drain of   checkers
//     /metrics                              open ops
//
// Everything started is registered with the run's cleanup, so an error or Ctrl-C at any point
// still stops every process, proxy and toxic. One seed drives the workload and the faults.
import { faultsHitTraffic } from '../checkers/faults-hit-traffic.js';
import { runCheckersOn, result, type CheckResult, type Checker } from '../checkers/checker.js';
import { startSchedule, type ActiveFault } from '../faults/schedule.js';
import { buildVerdict, writeReport, type VerdictFile } from '../report/write-report.js';
import { createRunDir, pointLatest } from '../report/run-dir.js';
import { createCleanup, type Cleanup } from '../runtime/cleanup.js';
import type { Target } from '../targets/target.js';
import { createClock, type Clock } from '../util/clock.js';
import { createRandom } from '../util/random.js';
import { createHistoryRecorder } from '../workload/history.js';
import { startWorkload } from '../workload/workload.js';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import type { Span, Tracer } from '@opentelemetry/api';
import { silentLogger } from '../telemetry/logger.js';
import { startOtlpReceiver } from '../telemetry/otlp-receiver.js';
import { createTracing, SPAN_LEDGER_ENV } from '../telemetry/tracing.js';
import { SPAN_LEDGER_PATH } from '../telemetry/span-ledger.js';
import { runSpans } from './run-spans.js';
import { clientServiceName } from '../protocol/names.js';
import type { HistoryOp, RunData, RunSpan } from './run-data.js';
import { createRunnerMetrics } from './runner-metrics.js';
// --- run Prometheus (limbo run --prometheus) ---
import { promqlQueryOf } from '../checkers/promql.js';
import type { StartedPrometheus } from '../telemetry/prometheus-server.js';
import { runTargets, startRunPrometheus, type StartedRunPrometheus } from './run-prometheus.js';
// --- end run Prometheus ---
import { keepLimboMetrics, startScraper } from './scraper.js';
import type { Suite } from './suite.js';

export type Phase = 'start' | 'warm-up' | 'chaos' | 'heal' | 'converge' | 'check' | 'report' | 'done';

export interface Progress {
  suite: string;
  phase: Phase;
  elapsedMs: number;
  opsDone: number;
  opsInFlight: number;
  activeFaults: readonly ActiveFault[];
}

export interface RunSuiteOptions {
  target: Target;
  seed: number;
  /** Root of the run directories (default `runs`). */
  outRoot: string;
  /** The command that replays this run, for the verdict. */
  replay: string;
  toxiproxyUrl?: string;
  clock?: Clock;
  cleanup?: Cleanup;
  onProgress?: (p: Progress) => void;
  progressIntervalMs?: number;
  onLog?: (line: string) => void;
  scrapeIntervalMs?: number;
  /** Trace the run: services export to the run's OTLP receiver, spans land in spans.jsonl (default true). */
  trace?: boolean;
  /** Start a Prometheus for the run (scraping every service and the runner at 1 s); off by default. */
  prometheus?: RunPrometheusSpec;
  /** Why the run has no Prometheus, for PromQL assertions (default `--prometheus off`). */
  noPrometheusReason?: string;
}

export interface RunPrometheusSpec {
  /** Alert rule files it loads (limbo run passes dashboards/alerts.yml). */
  rulesFiles?: string[];
  binary?: string;
  /** Called once the run has converged, before Prometheus stops (tests, extra queries). */
  beforeStop?: (prometheus: StartedPrometheus, run: RunData) => Promise<void>;
}

export interface SuiteRunResult {
  runDir: string;
  verdict: VerdictFile;
  run: RunData;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runSuite(suite: Suite, options: RunSuiteOptions): Promise<SuiteRunResult> {
  const clock = options.clock ?? createClock();
  const cleanup = options.cleanup ?? createCleanup();
  const log = options.onLog ?? (() => {});
  const random = createRandom(options.seed);
  const startedAt = new Date();
  const runDir = createRunDir(options.outRoot, suite.name, startedAt);
  const run: RunData = {
    suite: suite.name,
    target: options.target.name,
    seed: options.seed,
    phases: { startedAtWall: startedAt.toISOString() },
    history: [],
    series: [],
    faults: [],
  };
  const runErrors: string[] = [];
  const history = createHistoryRecorder(clock, join(runDir, 'history.jsonl'));
  const metrics = createRunnerMetrics(() => history.inFlight());
  let phase: Phase = 'start';
  let active: readonly ActiveFault[] = [];
  const tick = (): void =>
    options.onProgress?.({
      suite: suite.name,
      phase,
      elapsedMs: clock.nowMs(),
      opsDone: history.completed(),
      opsInFlight: history.inFlight(),
      activeFaults: active,
    });
  const progress = setInterval(tick, options.progressIntervalMs ?? 1000);
  const enter = (p: Phase): void => {
    phase = p;
    tick();
  };
  try {
    const metricsServer = await metrics.serve();
    cleanup.add('runner /metrics', () => metricsServer.stop());
    const traced = await startRunTracing(runDir, options.trace ?? true);
    cleanup.add('tracing', () => traced.stop());
    const clientsFirst = suite.schedule.some((e) => e.fault.name === 'clients-before-processors');
    const target = await options.target.start(suite.topology, {
      runDir,
      ...(options.toxiproxyUrl !== undefined ? { toxiproxyUrl: options.toxiproxyUrl } : {}),
      deferProcessors: clientsFirst,
      env: traced.env,
    });
    const untarget = cleanup.add(`target ${target.name}`, () => target.stop());
    const scraper = startScraper({
      clock,
      keep: (name) => keepLimboMetrics(name) || (target.keepMetric?.(name) ?? false),
      intervalMs: options.scrapeIntervalMs ?? 250,
      targets: () => {
        const t: Record<string, string | undefined> = {
          runner: metricsServer.url,
          ...target.extraMetricsUrls(),
        };
        for (const s of target.services.values()) t[s.name] = s.metricsUrl();
        return t;
      },
    });
    cleanup.add('scraper', () => scraper.stop());
    // --- run Prometheus ---
    let prom: StartedRunPrometheus | undefined;
    run.prometheus = { missing: options.noPrometheusReason ?? '--prometheus off', evaluations: [] };
    if (options.prometheus !== undefined) {
      try {
        prom = await startRunPrometheus({
          runDir,
          targets: runTargets(metricsServer.url, target),
          rulesFiles: options.prometheus.rulesFiles ?? [],
          ...(options.prometheus.binary !== undefined ? { binary: options.prometheus.binary } : {}),
          log,
        });
        const started = prom;
        cleanup.add('prometheus', () => started.stop());
        run.prometheus = { url: prom.url, dataDir: prom.dataDir, evaluations: [] };
        log(`prometheus ${prom.url} (pid ${prom.prometheus.pid}, data: ${prom.dataDir})`);
      } catch (err) {
        // The run goes on without it; its PromQL assertions are inconclusive with this reason.
        const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
        run.prometheus.missing = `prometheus did not start: ${message}`;
        log(run.prometheus.missing);
      }
    }
    // --- end run Prometheus ---

    enter('warm-up');
    run.phases.warmupStartMs = clock.nowMs();
    const workload = startWorkload({
      ...suite.workload,
      ...targetWorkloadLimits(suite.workload.maxRatePerSec, target.workloadLimits?.maxRatePerSec),
      ...(target.clientApi !== undefined ? { api: target.clientApi } : {}),
      baseUrls: target.ingressUrls,
      random: random.fork('workload'),
      history,
      ...(traced.clientTracer !== undefined ? { tracer: traced.clientTracer } : {}),
    });
    cleanup.add('workload', () => workload.stop(0));
    await sleep(suite.warmupMs);

    enter('chaos');
    run.phases.chaosStartMs = clock.nowMs();
    const chaosStartEpochMs = Date.now();
    const schedule = startSchedule(
      suite.schedule,
      { target, toxiproxy: target.toxiproxy, random: random.fork('faults') },
      clock,
      {
        onChange: (list, f, on) => {
          active = list;
          metrics.setFaultActive(f.fault, f.target, on);
          traced.faultWindow(f.fault, f.target, on, options.seed);
          log(`${on ? 'inject' : 'heal'} ${f.fault} ${f.target}`);
        },
        onError: (m) => {
          runErrors.push(m);
          log(m);
        },
      },
    );
    cleanup.add('final heal', () => schedule.finalHeal());
    await sleep(suite.chaosMs);

    enter('heal');
    run.phases.chaosEndMs = clock.nowMs();
    await schedule.finalHeal();
    run.phases.healedAtMs = clock.nowMs();
    run.faults = [...schedule.windows];

    enter('converge');
    await workload.drain(suite.convergeMs);
    // Prometheus too must have scraped the state at the deadline (bounded wait).
    await prom?.settle();
    // The state at the deadline, while clients still wait on whatever is open.
    await scraper.scrapeOnce();
    run.phases.deadlineMs = clock.nowMs();
    const deadlineEpochMs = Date.now();
    // --- run Prometheus: the suite's PromQL assertions, before the runner aborts open ops ---
    if (prom !== undefined && run.prometheus !== undefined) {
      const queries = suite.expect.flatMap((c) => promqlQueryOf(c) ?? []);
      run.prometheus.evaluations = await prom.evaluate(queries, chaosStartEpochMs, deadlineEpochMs);
    }
    // --- end run Prometheus ---
    await workload.stop(0);
    await workload.finalReads();
    await nameUnnamedInvocations(
      history.ops,
      target.resolveInvocationIds === undefined ? undefined : (keys) => target.resolveInvocationIds!(keys),
      log,
    );
    const known = target.serverInvocations?.();
    if (known !== undefined && known.size > 0) run.serverInvocations = Object.fromEntries(known);
    await scraper.scrapeOnce();
    await scraper.stop();
    run.series = scraper.samples;
    run.history = [...history.ops];
    run.phases.endedAtMs = clock.nowMs();
    for (const s of schedule.skipped)
      runErrors.push(`fault ${s.fault} on ${s.describe} at ${s.atMs} ms was not injected`);

    // Spans ended just now are still in the services' export queues: wait for them (bounded).
    run.spans = await traced.collect(run);
    run.spansDropped = traced.dropped();

    enter('check');
    const checks = checkRun(
      [
        ...suite.expect,
        ...(target.extraCheckers ?? []).filter((c) => !suite.expect.some((e) => e.name === c.name)),
      ],
      run,
      runErrors,
      target.missingSignals,
    );
    // --- run Prometheus ---
    if (prom !== undefined) {
      await options.prometheus?.beforeStop?.(prom.prometheus, run);
      await prom.stop();
    }
    // --- end run Prometheus ---

    enter('report');
    untarget();
    await target.stop();
    await history.close();
    // Services flushed their spans when they stopped; flush the runner's and close spans.jsonl.
    await traced.stop(run);
    const verdict = buildVerdict(run, checks, {
      durationMs: clock.nowMs(),
      replay: options.replay,
      runErrors,
    });
    writeReport(runDir, run, verdict);
    pointLatest(options.outRoot, runDir);
    enter('done');
    return { runDir, verdict, run };
  } finally {
    clearInterval(progress);
    await cleanup.runAll();
    await history.close();
  }
}

const MAX_RESOLVED = 1000;

/**
 * Ops that never learnt their invocation id (hung, or ended without an answer naming it) get
 * the id the target assigned to their idempotency key, if it can tell (bounded, best effort).
 */
async function nameUnnamedInvocations(
  ops: readonly HistoryOp[],
  resolve: ((keys: readonly string[]) => Promise<Map<string, string>>) | undefined,
  log: (line: string) => void,
): Promise<void> {
  if (resolve === undefined) return;
  const named = new Set<number>();
  for (const op of ops) if (op.invocationId !== undefined) named.add(op.opId);
  const byKey = new Map<string, HistoryOp[]>();
  for (const op of ops) {
    const key = op.request?.idempotencyKey;
    if (key === undefined || named.has(op.opId)) continue;
    if (!byKey.has(key) && byKey.size >= MAX_RESOLVED) continue;
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [op]);
    else list.push(op);
  }
  if (byKey.size === 0) return;
  try {
    const ids = await resolve([...byKey.keys()]);
    for (const [key, id] of ids) for (const op of byKey.get(key) ?? []) op.invocationId = id;
    log(`named ${ids.size} of ${byKey.size} unnamed invocations from their idempotency keys`);
  } catch (err) {
    log(`could not name unnamed invocations: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The lower of the suite's and the target's op-rate caps, if any. */
function targetWorkloadLimits(suiteCap?: number, targetCap?: number): { maxRatePerSec?: number } {
  const caps = [suiteCap, targetCap].filter((c): c is number => c !== undefined);
  return caps.length > 0 ? { maxRatePerSec: Math.min(...caps) } : {};
}

interface RunTracing {
  env: NodeJS.ProcessEnv;
  /** The workload's tracer: one client span per op (service `client`). */
  clientTracer?: Tracer;
  faultWindow(fault: string, target: string, on: boolean, seed: number): void;
  /** The run's spans so far, ended and open (after the exporters' batch delay). */
  collect(run: RunData): Promise<RunSpan[]>;
  dropped(): number;
  /** Flushes, appends the spans that never ended to spans.jsonl (marked), closes it. */
  stop(run?: RunData): Promise<void>;
}

/** Longer than the services' batch delay (500 ms) and the ledger's tick (50 ms). */
const SPAN_SETTLE_MS = 800;
/** Spans kept in memory for the checkers; spans.jsonl has them all. */
const MAX_RUN_SPANS = 500_000;

/**
 * The run's OTLP receiver (services export to it through OTEL_* in their environment), its
 * spans appended to spans.jsonl, and the runner's own tracer: one span per fault window.
 */
async function startRunTracing(runDir: string, enabled: boolean): Promise<RunTracing> {
  if (!enabled)
    return {
      env: process.env,
      faultWindow: () => {},
      collect: () => Promise.resolve([]),
      dropped: () => 0,
      stop: () => Promise.resolve(),
    };
  const out = createWriteStream(join(runDir, 'spans.jsonl'), { flags: 'w' });
  const receiver = await startOtlpReceiver({
    maxSpans: MAX_RUN_SPANS,
    onSpans: (spans) => {
      for (const s of spans) out.write(JSON.stringify(s) + '\n');
    },
  });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    [SPAN_LEDGER_ENV]: `${receiver.url}${SPAN_LEDGER_PATH}`,
  };
  delete env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  // Each service is named after its node (processor-1 …): checks and fault windows read them.
  delete env.OTEL_SERVICE_NAME;
  const tracing = createTracing('runner', silentLogger, env);
  const client = createTracing(clientServiceName, silentLogger, env);
  const open = new Map<string, Span>();
  let stopped: Promise<void> | undefined;
  return {
    env,
    clientTracer: client.tracer,
    faultWindow(fault, target, on, seed) {
      const key = `${fault}\0${target}`;
      if (on) {
        open.set(
          key,
          tracing.tracer.startSpan(`fault ${fault}`, {
            attributes: { 'limbo.fault': fault, 'limbo.fault.target': target, 'limbo.seed': seed },
          }),
        );
      } else {
        open.get(key)?.end();
        open.delete(key);
      }
    },
    async collect(run) {
      await new Promise((r) => setTimeout(r, SPAN_SETTLE_MS));
      return runSpans(receiver.spans, receiver.unexportedSpans(), run);
    },
    dropped: () => receiver.dropped,
    stop: (run) =>
      (stopped ??= (async () => {
        for (const span of open.values()) span.end();
        open.clear();
        await Promise.all([tracing.shutdown(), client.shutdown()]);
        // Spans only the ledger knows: ended ones whose export was lost, and those never ended.
        if (run !== undefined)
          for (const s of runSpans([], receiver.unexportedSpans(), run)) out.write(JSON.stringify(s) + '\n');
        await receiver.stop();
        await new Promise<void>((resolve) => out.end(() => resolve()));
      })()),
  };
}

/** The suite's checks, plus faultsHitTraffic (a fault that met nothing is never green) and the schedule's own health. */
export function checkRun(
  expect: readonly Checker[],
  run: RunData,
  runErrors: readonly string[],
  missingSignals?: Readonly<Record<string, string>>,
): CheckResult[] {
  const checkers = [...expect];
  if (!checkers.some((c) => c.name === 'faultsHitTraffic') && run.faults.length > 0)
    checkers.push(faultsHitTraffic());
  const checks = runCheckersOn(checkers, run, missingSignals);
  if (runErrors.length > 0)
    checks.push(
      result('scheduleApplied', 'inconclusive', `${runErrors.length} problem(s) applying the schedule`, {
        details: { errors: runErrors },
      }),
    );
  return checks;
}
