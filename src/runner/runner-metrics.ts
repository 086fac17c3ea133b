// The runner's own /metrics: limbo_fault_active{fault,target} (1 while injected) and
// limbo_workload_pending (client ops in flight), so dashboards can overlay faults on the
// services' signals. Its own registry, no default process metrics.
import { Gauge, Registry } from 'prom-client';
import { metricNames } from '../protocol/names.js';
import { startMetricsServer, type StartedMetricsServer } from '../telemetry/metrics.js';

export interface RunnerMetrics {
  readonly registry: Registry;
  setFaultActive(fault: string, target: string, active: boolean): void;
  serve(host?: string, port?: number): Promise<StartedMetricsServer>;
}

export function createRunnerMetrics(pending: () => number): RunnerMetrics {
  const registry = new Registry();
  const faultActive = new Gauge({
    name: metricNames.faultActive,
    help: '1 while a fault is injected',
    labelNames: ['fault', 'target'],
    registers: [registry],
  });
  new Gauge({
    name: metricNames.workloadPending,
    help: 'client ops in flight',
    registers: [registry],
    collect() {
      this.set(pending());
    },
  });
  return {
    registry,
    setFaultActive: (fault, target, active) => faultActive.set({ fault, target }, active ? 1 : 0),
    serve: (host = '127.0.0.1', port = 0) => startMetricsServer(registry, host, port),
  };
}
