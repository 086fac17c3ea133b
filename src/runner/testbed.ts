// The testbed around a system under test: the runner's own /metrics, the span sink services
// export to, and the target itself (every service, a Toxiproxy proxy per link). `limbo run`
// (through runSuite), `limbo up` and tests start it the same way and stop it the same way.
//
//   startTestbed ─▶ runner /metrics ─▶ span sink (OTEL_* env) ─▶ target.start(topology, env)
//   stop          ◀─ target.stop() (services flush their spans) ◀─ span sink stop
import type { PrometheusTarget } from '../observe/prometheus-server.js';
import { startSpanSink, type StartedSpanSink } from '../observe/span-sink.js';
import { createCleanup, type Cleanup } from '../runtime/cleanup.js';
import {
  profileOf,
  type StartedTarget,
  type Target,
  type TargetProfile,
  type Topology,
} from '../targets/target.js';
import type { StartedMetricsServer } from '../telemetry/metrics.js';
import { createRunnerMetrics, type RunnerMetrics } from './runner-metrics.js';

export interface TestbedOptions {
  target: Target;
  topology: Topology;
  /** The run directory: service logs, data, spans.jsonl. */
  runDir: string;
  toxiproxyUrl?: string;
  /** Start everything but the processors (clients-before-processors). */
  deferProcessors?: boolean;
  /** The built-in span sink (default), a user's OTLP endpoint, or no tracing. */
  trace?: boolean | { otlpEndpoint: string };
  env?: NodeJS.ProcessEnv;
  /** Client ops in flight, for the runner's limbo_workload_pending (default 0). */
  pendingOps?: () => number;
  /** The run's seed, for the embedded Toxiproxy's toxicity draws. */
  seed?: number;
  /** Register every undo here too (the caller's Ctrl-C handler); default: its own. */
  cleanup?: Cleanup;
}

export interface StartedTestbed extends AsyncDisposable {
  readonly runDir: string;
  readonly target: StartedTarget;
  readonly profile: TargetProfile;
  readonly runnerMetrics: RunnerMetrics;
  readonly runnerMetricsUrl: string;
  readonly spans: StartedSpanSink;
  /** Every metrics endpoint by name now: the runner, the target's extras, each running service. */
  metricsEndpoints(): Record<string, string | undefined>;
  /** The same endpoints as Prometheus scrape targets (job: the runner, the extra's name, or the service's role). */
  prometheusTargets(): PrometheusTarget[];
  /** Stops the target (its services flush their spans), then the span sink and the runner's /metrics. */
  stop(): Promise<void>;
}

export async function startTestbed(options: TestbedOptions): Promise<StartedTestbed> {
  const cleanup = options.cleanup ?? createCleanup();
  const undos: (() => void)[] = [];
  const own = createCleanup();
  const add = (label: string, undo: () => Promise<void>): void => {
    undos.push(cleanup.add(label, undo));
    own.add(label, undo);
  };
  try {
    const runnerMetrics = createRunnerMetrics(options.pendingOps ?? (() => 0));
    const metricsServer: StartedMetricsServer = await runnerMetrics.serve();
    add('runner /metrics', () => metricsServer.stop());
    const spans = await startSpanSink({
      runDir: options.runDir,
      ...(options.trace !== undefined ? { trace: options.trace } : {}),
      ...(options.env !== undefined ? { env: options.env } : {}),
    });
    add('span sink', () => spans.stop());
    const target = await options.target.start(options.topology, {
      runDir: options.runDir,
      ...(options.toxiproxyUrl !== undefined ? { toxiproxyUrl: options.toxiproxyUrl } : {}),
      ...(options.deferProcessors === true ? { deferProcessors: true } : {}),
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      env: spans.env,
    });
    add(`target ${target.name}`, () => target.stop());
    let stopped: Promise<void> | undefined;
    const stop = (): Promise<void> =>
      (stopped ??= (async () => {
        for (const undo of undos) undo();
        await own.runAll();
      })());
    return {
      runDir: options.runDir,
      target,
      profile: profileOf(options.target),
      runnerMetrics,
      runnerMetricsUrl: metricsServer.url,
      spans,
      metricsEndpoints() {
        const t: Record<string, string | undefined> = {
          runner: metricsServer.url,
          ...target.extraMetricsUrls(),
        };
        for (const s of target.services.values()) t[s.name] = s.metricsUrl();
        return t;
      },
      prometheusTargets() {
        const t: PrometheusTarget[] = [{ job: 'runner', url: metricsServer.url }];
        for (const [job, url] of Object.entries(target.extraMetricsUrls())) t.push({ job, url });
        for (const s of target.services.values()) {
          const url = s.metricsUrl();
          if (url !== undefined) t.push({ job: s.role, url });
        }
        return t;
      },
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (err) {
    for (const undo of undos) undo();
    await own.runAll();
    throw err;
  }
}
