// `limbo run --prometheus auto|on|off` → whether each run starts its own Prometheus.
// Without the flag a run starts none, unless a suite has PromQL assertions (then: auto), so
// `limbo run chaos` answers those where Prometheus is installed without anyone asking.
// `on` without a binary is bad usage (exit 2); `auto` without one leaves PromQL assertions
// inconclusive, with the reason.
import { fileURLToPath } from 'node:url';
import { promqlQueryOf } from '../checkers/promql.js';
import type { RunSuiteOptions } from '../runner/run-suite.js';
import type { Suite } from '../runner/suite.js';
import { prometheusAvailable } from '../observe/prometheus-server.js';
import { UsageError } from '../util/errors.js';

export interface RunPrometheusChoice {
  /** For the progress output, e.g. `on (1 s scrapes, alerts.yml loaded)`. */
  summary: string;
  runOptions: Pick<RunSuiteOptions, 'prometheus' | 'noPrometheusReason'>;
}

const INSTALL = 'apt-get install --no-install-recommends prometheus';

export function alertRulesFile(): string {
  return fileURLToPath(new URL('../../../dashboards/alerts.yml', import.meta.url));
}

export function runPrometheusChoice(
  flag: 'auto' | 'on' | 'off' | undefined,
  suites: readonly Suite[],
  available: (binary?: string) => boolean = prometheusAvailable,
): RunPrometheusChoice {
  const asserting = suites
    .filter((s) => s.expect.some((c) => promqlQueryOf(c) !== undefined))
    .map((s) => s.name);
  const mode = flag ?? (asserting.length > 0 ? 'auto' : 'off');
  const why = flag === undefined && mode === 'auto' ? ` (PromQL assertions in ${asserting.join(', ')})` : '';
  if (mode === 'off')
    return {
      summary: 'off',
      runOptions: { noPrometheusReason: '--prometheus off' },
    };
  if (!available()) {
    if (mode === 'on') throw new UsageError(`--prometheus on: no prometheus binary on PATH (${INSTALL})`);
    return {
      summary: `not started${why}: no prometheus binary on PATH (${INSTALL})`,
      runOptions: { noPrometheusReason: `no prometheus binary on PATH (${INSTALL})` },
    };
  }
  return {
    summary: `one per run, 1 s scrapes, alert rules loaded${why}`,
    runOptions: { prometheus: { rulesFiles: [alertRulesFile()] } },
  };
}
