// One suite run, phase by phase (docs/architecture.md#run-phases), each phase a function over one RunContext:
//
//   start ─▶ warm-up ─▶ chaos ─▶ heal ─▶ converge ─▶ check ─▶ report
//   testbed   workload   schedule  final    bounded    pure      run dir
//   + observers          of faults heal     drain, deadline, checkers
//                                           observers collect
//
// Everything started is registered with the run's cleanup, so an error or Ctrl-C at any point
// still stops every process, proxy and toxic. One seed drives the workload and the faults.
import { convertRunCoverage, coverageEnv } from '../coverage/collect.js';
import { faultSpaceOf, writeFaultSpace } from '../coverage/fault-space.js';
import { faultsHitTraffic } from '../checkers/faults-hit-traffic.js';
import { serviceLevels } from '../checkers/service-levels.js';
import { runCheckersOn, result, type CheckResult, type Checker } from '../checkers/checker.js';
import { startSchedule, type ActiveFault, type RunningSchedule } from '../faults/schedule.js';
import { proxyCountersOf, type ProxyCounterReader, type ProxyCounters } from '../faults/evidence.js';
import { recordTraffic, type RecentTraffic } from '../faults/recent-traffic.js';
import { scrape } from '../telemetry/prom-text.js';
import { eachObserver, type Observer } from '../observe/observer.js';
import type { StartedPrometheus } from '../observe/prometheus-server.js';
import {
  prometheusObserver,
  startRunPrometheus,
  type StartedRunPrometheus,
} from '../observe/run-prometheus.js';
import { keepLimboMetrics, metricsObserver, startScraper } from '../observe/scraper.js';
import { writeReport, writeReportHtml } from '../report/write-report.js';
import { afterClosePhase, capYoungGeneration, collectGarbage, limitRunnerHeapGrowth } from '../launch/gc.js';
import { runFiles } from '../run-data/files.js';
import type { HistoryOp, RunData } from '../run-data/run-data.js';
import { createRunDir, pointLatest } from '../run-data/run-dir.js';
import { buildVerdict, type VerdictFile } from '../run-data/verdict.js';
import { diagnose } from '../diagnose/diagnose.js';
import { createCleanup, type Cleanup } from '../runtime/cleanup.js';
import type { Target } from '../targets/target.js';
import { createClock, type Clock } from '../util/clock.js';
import { messageOf } from '../util/errors.js';
import { createRandom, type Random } from '../util/random.js';
import { createHistoryRecorder, type HistoryRecorder } from '../workload/history.js';
import { startWorkload, type StartedWorkload } from '../workload/workload.js';
import { join } from 'node:path';
import type { Suite } from './suite.js';
import { startTestbed, type StartedTestbed } from './testbed.js';

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
  /** Measure the code coverage of the run's limbo processes into `coverage.json` (default off). */
  coverage?: boolean;
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

/**
 * A run as a loop of runs should keep it: without its data. V8 keeps an async function's dead
 * locals until they are overwritten, so a loop that holds a whole result keeps that run's
 * history, series and spans alive through the next run (the testbed bench's runner peak:
 * 200 → 173 MiB over three suites once it held only the verdict).
 */
export type SuiteRunOutcome = Omit<SuiteRunResult, 'run'>;

/** runSuite, keeping only the outcome: the run's data is garbage once this returns. */
export async function runSuiteOutcome(suite: Suite, options: RunSuiteOptions): Promise<SuiteRunOutcome> {
  const { runDir, verdict } = await runSuite(suite, options);
  return { runDir, verdict };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Everything one suite run shares between its phases. */
interface RunContext {
  readonly suite: Suite;
  readonly options: RunSuiteOptions;
  readonly clock: Clock;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
  readonly random: Random;
  readonly runDir: string;
  readonly run: RunData;
  readonly runErrors: string[];
  readonly history: HistoryRecorder;
  readonly testbed: StartedTestbed;
  readonly observers: Observer[];
  /** The proxies' counters as the warm-up began (undefined: they could not be read). */
  trafficBaseline?: ProxyCounters;
  recentTraffic?: RecentTraffic;
  enter(p: Phase): void;
  setActive(list: readonly ActiveFault[]): void;
}

/** Runs of this process under way (explore runs several side by side). */
let runsUnderWay = 0;

export async function runSuite(suite: Suite, options: RunSuiteOptions): Promise<SuiteRunResult> {
  // The previous runs' data is garbage now: one full collection before this run starts keeps
  // the heap from growing run after run (launch/gc.ts). Never while another run of this process
  // is under way: the pause would stall its clients and its embedded Toxiproxy. It waits for
  // the loop's close phase first: the servers the run before closed a moment ago hold all of
  // that run until then (a finished leader-down run: 51 MiB of heap kept at once, 19 after).
  if (runsUnderWay === 0) {
    await afterClosePhase();
    if (runsUnderWay === 0) collectGarbage();
  }
  capYoungGeneration();
  limitRunnerHeapGrowth();
  runsUnderWay++;
  try {
    return await runOneSuite(suite, options);
  } finally {
    runsUnderWay--;
  }
}

async function runOneSuite(suite: Suite, options: RunSuiteOptions): Promise<SuiteRunResult> {
  const clock = options.clock ?? createClock();
  const cleanup = options.cleanup ?? createCleanup();
  const log = options.onLog ?? (() => {});
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
  const history = createHistoryRecorder(clock, join(runDir, runFiles.history));
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
  tick(); // the start phase is shown at once, however fast the testbed starts
  // The run's Prometheus starts beside the testbed (its first scrape comes on its own clock,
  // see run-prometheus.ts); it learns the targets once the testbed is up.
  let bed: StartedTestbed | undefined;
  const prometheus = startPrometheusEarly(options, runDir, () => bed, cleanup);
  let written: VerdictFile | undefined;
  try {
    const testbed = await startTestbed({
      target: options.target,
      topology: suite.topology,
      runDir,
      ...(options.toxiproxyUrl !== undefined ? { toxiproxyUrl: options.toxiproxyUrl } : {}),
      deferProcessors: suite.schedule.some((e) => e.fault.name === 'clients-before-processors'),
      trace: options.trace ?? true,
      seed: options.seed,
      pendingOps: () => history.inFlight(),
      cleanup,
      ...(options.coverage === true ? { env: coverageEnv(process.env, runDir) } : {}),
    });
    bed = testbed;
    const ctx: RunContext = {
      suite,
      options,
      clock,
      cleanup,
      log,
      random: createRandom(options.seed),
      runDir,
      run,
      runErrors: [],
      history,
      testbed,
      observers: [],
      enter: (p) => {
        phase = p;
        tick();
      },
      setActive: (list) => (active = list),
    };
    await startObservers(ctx, prometheus);
    const workload = await warmUp(ctx);
    const schedule = await chaos(ctx);
    await heal(ctx, schedule);
    await converge(ctx, workload, schedule);
    const checks = await check(ctx);
    const verdict = await report(ctx, checks);
    written = verdict;
    ctx.enter('done');
    return { runDir, verdict, run };
  } finally {
    clearInterval(progress);
    await prometheus?.catch(() => undefined); // its stop is in the cleanup once it has started
    await cleanup.runAll();
    await history.close();
    // After the cleanup: every process has exited and written its last counts. report.html
    // is written again with them (its Code coverage panel), or with why there are none.
    if (options.coverage === true) {
      const missing = await saveCoverage(runDir, log);
      if (written !== undefined)
        writeReportHtml(runDir, run, written, missing !== undefined ? { coverageMissing: missing } : {});
    }
  }
}

/** The fault space the run covered (coverage/fault-space.ts); a failure to write it is only logged. */
function saveFaultSpace(ctx: RunContext): void {
  try {
    writeFaultSpace(ctx.runDir, faultSpaceOf(ctx.run, ctx.testbed.target.linkKinds));
  } catch (err) {
    ctx.log(`fault space: not saved: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Converts the run's raw coverage into coverage.json; when none is written, why (for report.html). */
async function saveCoverage(runDir: string, log: (line: string) => void): Promise<string | undefined> {
  try {
    const files = await convertRunCoverage(runDir);
    if (files > 0) {
      log(`coverage: ${files} source files in ${join(runDir, runFiles.coverage)}`);
      return undefined;
    }
    log('coverage: none (no limbo process of this target ran)');
    return 'This run was made with --coverage, but no limbo process of its target ran, so there was nothing to measure.';
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log(`coverage: not saved: ${message}`);
    return `This run was made with --coverage, but its coverage could not be saved: ${message}.`;
  }
}

/** Starts the run's Prometheus when asked for one (undefined: none); its stop joins `cleanup`. */
function startPrometheusEarly(
  options: RunSuiteOptions,
  runDir: string,
  testbed: () => StartedTestbed | undefined,
  cleanup: Cleanup,
): Promise<StartedRunPrometheus> | undefined {
  if (options.prometheus === undefined) return undefined;
  const started = startRunPrometheus({
    runDir,
    targets: () => testbed()?.prometheusTargets() ?? [],
    rulesFiles: options.prometheus.rulesFiles ?? [],
    ...(options.prometheus.binary !== undefined ? { binary: options.prometheus.binary } : {}),
    log: options.onLog ?? (() => {}),
  });
  const withStop = started.then((prom) => {
    cleanup.add('prometheus', () => prom.stop());
    return prom;
  });
  withStop.catch(() => undefined); // a start that fails is reported in startObservers
  return withStop;
}

/** The run's observers: the metrics scraper and, when asked for, the run's Prometheus. */
async function startObservers(
  ctx: RunContext,
  prometheus: Promise<StartedRunPrometheus> | undefined,
): Promise<void> {
  const { options, testbed, run, log } = ctx;
  const scraper = startScraper({
    clock: ctx.clock,
    keep: (name) => keepLimboMetrics(name) || testbed.profile.keepMetric(name),
    intervalMs: options.scrapeIntervalMs ?? 250,
    targets: () => testbed.metricsEndpoints(),
  });
  ctx.cleanup.add('scraper', () => scraper.stop());
  ctx.observers.push(metricsObserver(scraper), testbed.spans.observer);
  run.prometheus = { missing: options.noPrometheusReason ?? '--prometheus off', evaluations: [] };
  if (options.prometheus === undefined || prometheus === undefined) return;
  try {
    const prom = await prometheus;
    // So the dashboards and assertions see the run from its start: the clients begin after it.
    await prom.firstScrape();
    const queries = ctx.suite.expect.flatMap((c) => c.promql ?? []);
    ctx.observers.push(prometheusObserver(prom, queries, options.prometheus.beforeStop));
    run.prometheus = { url: prom.url, dataDir: prom.dataDir, evaluations: [] };
    log(`prometheus ${prom.url} (pid ${prom.prometheus.pid}, data: ${prom.dataDir})`);
  } catch (err) {
    // The run goes on without it; its PromQL assertions are inconclusive with this reason.
    run.prometheus.missing = `prometheus did not start: ${messageOf(err).split('\n')[0]}`;
    log(run.prometheus.missing);
  }
}

/** Clients start against the ingress (within the target's rate caps); the warm-up lets them settle. */
async function warmUp(ctx: RunContext): Promise<StartedWorkload> {
  const { suite, testbed, run } = ctx;
  ctx.enter('warm-up');
  run.phases.warmupStartMs = ctx.clock.nowMs();
  // Which links carry the workload's traffic shows from here on (linkInto prefers those).
  ctx.trafficBaseline = await proxyCounterReader(testbed.target.toxiproxyUrl)().catch(() => undefined);
  // ... and which carry it at the moment a fault goes in (the last few seconds, kept as it goes).
  const recent = recordTraffic(proxyCounterReader(testbed.target.toxiproxyUrl));
  ctx.recentTraffic = recent;
  ctx.cleanup.add('recent traffic', () => Promise.resolve(recent.stop()));
  const workload = startWorkload({
    ...suite.workload,
    ...targetWorkloadLimits(suite.workload.maxRatePerSec, testbed.profile.workloadLimits.maxRatePerSec),
    api: testbed.profile.clientApi,
    ...(testbed.profile.clientAdapter !== undefined ? { adapter: testbed.profile.clientAdapter } : {}),
    baseUrls: testbed.target.ingressUrls,
    random: ctx.random.fork('workload'),
    history: ctx.history,
    ...(testbed.spans.clientTracer !== undefined ? { tracer: testbed.spans.clientTracer } : {}),
  });
  ctx.cleanup.add('workload', () => workload.stop(0));
  await sleep(suite.warmupMs);
  return workload;
}

interface ChaosRun {
  readonly schedule: RunningSchedule;
  readonly chaosStartEpochMs: number;
}

/** The suite's fault schedule runs for the chaos phase; each change is logged, traced and exported. */
async function chaos(ctx: RunContext): Promise<ChaosRun> {
  const { testbed, options, log } = ctx;
  ctx.enter('chaos');
  ctx.run.phases.chaosStartMs = ctx.clock.nowMs();
  const chaosStartEpochMs = Date.now();
  const schedule = startSchedule(
    ctx.suite.schedule,
    {
      target: testbed.target,
      toxiproxy: testbed.target.toxiproxy,
      random: ctx.random.fork('faults'),
      proxyCounters: proxyCounterReader(testbed.target.toxiproxyUrl),
      ...(ctx.trafficBaseline !== undefined ? { trafficBaseline: ctx.trafficBaseline } : {}),
      ...(ctx.recentTraffic !== undefined ? { recentTraffic: ctx.recentTraffic } : {}),
    },
    ctx.clock,
    {
      onChange: (list, f, on) => {
        ctx.setActive(list);
        testbed.runnerMetrics.setFaultActive(f.fault, f.target, on);
        testbed.spans.faultWindow(f.fault, f.target, on, options.seed);
        log(`${on ? 'inject' : 'heal'} ${f.fault} ${f.target}`);
      },
      onError: (m) => {
        ctx.runErrors.push(m);
        log(m);
      },
    },
  );
  ctx.cleanup.add('final heal', () => schedule.finalHeal());
  await sleep(ctx.suite.chaosMs);
  return { schedule, chaosStartEpochMs };
}

/** Reads every proxy's counters from the Toxiproxy server's /metrics (each fault's evidence). */
function proxyCounterReader(apiUrl: string): ProxyCounterReader {
  const url = `${apiUrl.replace(/\/$/, '')}/metrics`;
  return async () => proxyCountersOf(await scrape(url, 1500));
}

/** Every fault still active is removed (the final heal). */
async function heal(ctx: RunContext, { schedule }: ChaosRun): Promise<void> {
  ctx.enter('heal');
  ctx.run.phases.chaosEndMs = ctx.clock.nowMs();
  await schedule.finalHeal();
  ctx.run.phases.healedAtMs = ctx.clock.nowMs();
  ctx.run.faults = [...schedule.windows];
}

/**
 * A bounded wait for open ops to end; then the deadline: observers see the state while
 * clients still wait on whatever is open, the clients are aborted, and observers collect.
 */
async function converge(ctx: RunContext, workload: StartedWorkload, chaosRun: ChaosRun): Promise<void> {
  const { run, observers, log } = ctx;
  ctx.enter('converge');
  await workload.drain(ctx.suite.convergeMs);
  await eachObserver(observers, 'settle', (o) => o.settle?.(), log);
  run.phases.deadlineMs = ctx.clock.nowMs();
  const moment = { run, chaosStartEpochMs: chaosRun.chaosStartEpochMs, deadlineEpochMs: Date.now() };
  await eachObserver(observers, 'beforeAbort', (o) => o.beforeAbort?.(moment), log);
  await workload.stop(0);
  await workload.finalReads();
  const target = ctx.testbed.target;
  await nameUnnamedInvocations(ctx.history.ops, target.resolveInvocationIds?.bind(target), log);
  const known = target.serverInvocations?.();
  if (known !== undefined && known.size > 0) run.serverInvocations = Object.fromEntries(known);
  run.history = [...ctx.history.ops];
  await eachObserver(observers, 'collect', (o) => o.collect?.(run), log);
  run.phases.endedAtMs = ctx.clock.nowMs();
  for (const s of chaosRun.schedule.skipped)
    ctx.runErrors.push(`fault ${s.fault} on ${s.describe} at ${s.atMs} ms was not injected`);
}

/** The suite's checks and the target's own, on the run data; then the observers stop. */
async function check(ctx: RunContext): Promise<CheckResult[]> {
  ctx.enter('check');
  const { suite, testbed } = ctx;
  const checks = checkRun(
    [
      ...suite.expect,
      ...testbed.profile.extraCheckers.filter((c) => !suite.expect.some((e) => e.name === c.name)),
      // The target's service levels, held against every fault of every run on it.
      ...(testbed.profile.slo !== undefined &&
      ctx.run.faults.length > 0 &&
      !suite.expect.some((e) => e.name === 'serviceLevels')
        ? [serviceLevels(testbed.profile.slo)]
        : []),
    ],
    ctx.run,
    ctx.runErrors,
    testbed.profile.missingSignals,
    testbed.profile.inapplicableChecks,
  );
  await eachObserver(ctx.observers, 'stop', (o) => o.stop(), ctx.log);
  return checks;
}

/** The testbed stops (services flush their spans), and the run directory gets its files. */
async function report(ctx: RunContext, checks: CheckResult[]): Promise<VerdictFile> {
  ctx.enter('report');
  await ctx.testbed.stop();
  await ctx.history.close();
  const diagnosis = diagnose(ctx.run, checks);
  const verdict = buildVerdict(ctx.run, checks, {
    durationMs: ctx.clock.nowMs(),
    replay: ctx.options.replay,
    runErrors: ctx.runErrors,
    ...(diagnosis !== undefined ? { diagnosis } : {}),
  });
  // Before the report, which draws it; after the testbed's stop, which brings in the last spans.
  saveFaultSpace(ctx);
  writeReport(
    ctx.runDir,
    ctx.run,
    verdict,
    ctx.options.coverage === true
      ? {
          coverageMissing:
            'This run was made with --coverage: its coverage is merged once its processes have stopped, and this report is written again then.',
        }
      : {},
  );
  pointLatest(ctx.options.outRoot, ctx.runDir);
  return verdict;
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
    log(`could not name unnamed invocations: ${messageOf(err)}`);
  }
}

/** The lower of the suite's and the target's op-rate caps, if any. */
function targetWorkloadLimits(suiteCap?: number, targetCap?: number): { maxRatePerSec?: number } {
  const caps = [suiteCap, targetCap].filter((c): c is number => c !== undefined);
  return caps.length > 0 ? { maxRatePerSec: Math.min(...caps) } : {};
}

/** The suite's checks, plus faultsHitTraffic (a fault that met nothing is never green) and the schedule's own health. */
export function checkRun(
  expect: readonly Checker[],
  run: RunData,
  runErrors: readonly string[],
  missingSignals?: Readonly<Record<string, string>>,
  inapplicableChecks?: Readonly<Record<string, string>>,
): CheckResult[] {
  const checkers = [...expect];
  if (!checkers.some((c) => c.name === 'faultsHitTraffic') && run.faults.length > 0)
    checkers.push(faultsHitTraffic());
  const checks = runCheckersOn(checkers, run, missingSignals, inapplicableChecks);
  if (runErrors.length > 0)
    checks.push(
      result('scheduleApplied', 'inconclusive', `${runErrors.length} problem(s) applying the schedule`, {
        details: { errors: runErrors },
      }),
    );
  return checks;
}
