// Generates the committed dashboard JSON from the TypeScript definitions, and lists every
// PromQL expression the dashboards run so they can be checked against a real Prometheus.
//
//   overview.ts / processors.ts / log.ts ─▶ Dashboard objects ─▶ dashboards/<uid>.json
//                                                  └─▶ dashboardExpressions() ─▶ tests, runs
//
// `npm run dashboards` rewrites the JSON; a test fails when the committed JSON is stale.
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { logDashboard } from './log.js';
import { overviewDashboard } from './overview.js';
import { processorsDashboard } from './processors.js';
import { limboMetricsIn } from '../../src/checkers/promql.js';

export interface DashboardFile {
  /** File name inside `dashboards/`, e.g. `limbo-overview.json`. */
  file: string;
  dashboard: Dashboard;
  json: string;
}

export function allDashboards(): Dashboard[] {
  return [overviewDashboard(), processorsDashboard(), logDashboard()];
}

export function renderDashboard(dashboard: Dashboard): string {
  return `${JSON.stringify(dashboard, null, 2)}\n`;
}

export function dashboardFiles(): DashboardFile[] {
  return allDashboards().map((dashboard) => ({
    file: `${dashboard.uid ?? dashboard.title}.json`,
    dashboard,
    json: renderDashboard(dashboard),
  }));
}

export interface DashboardExpression {
  dashboard: string;
  /** Panel title, or `annotation: <name>` for an annotation query. */
  panel: string;
  refId: string;
  /** The PromQL as written in the dashboard, with Grafana variables. */
  expr: string;
}

interface TargetLike {
  expr?: unknown;
  refId?: unknown;
}

/** Every PromQL expression of every panel (and annotation) of every dashboard. */
export function dashboardExpressions(
  dashboards: readonly Dashboard[] = allDashboards(),
): DashboardExpression[] {
  const out: DashboardExpression[] = [];
  for (const d of dashboards) {
    for (const panel of d.panels ?? []) {
      if (panel.type === 'row' || !('targets' in panel)) continue;
      for (const target of (panel.targets ?? []) as TargetLike[]) {
        if (typeof target.expr !== 'string') continue;
        out.push({
          dashboard: d.title ?? '',
          panel: panel.title ?? '',
          refId: typeof target.refId === 'string' ? target.refId : '',
          expr: target.expr,
        });
      }
    }
    for (const a of d.annotations?.list ?? []) {
      if (typeof a.expr !== 'string') continue;
      out.push({ dashboard: d.title ?? '', panel: `annotation: ${a.name}`, refId: '', expr: a.expr });
    }
  }
  return out;
}

/** The limbo_* metric families an expression reads (histogram suffixes removed). */
export function metricsRead(expr: string): string[] {
  return limboMetricsIn(expr);
}

export interface InterpolateOptions {
  /** What `$__rate_interval` becomes; at least 4 scrape intervals. */
  rateWindow?: string;
  /** What `$__range` becomes: the evaluated time range. */
  range?: string;
}

/**
 * Replaces Grafana's variables so Prometheus can evaluate an expression: `$__rate_interval`
 * and `$__range` by fixed windows, and the dashboard filters (`$service`, `$partition`) by
 * `.*` as when "All" is selected.
 */
export function interpolate(expr: string, options: InterpolateOptions = {}): string {
  return expr
    .replaceAll('$__rate_interval', options.rateWindow ?? '1m')
    .replaceAll('$__range', options.range ?? '15m')
    .replace(/\$\{?(service|partition)\}?/g, '.*');
}

/** The repository's `dashboards/` folder, found from this module's location (source or dist). */
export function dashboardsDir(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = resolve(from);
  for (let depth = 0; depth < 6; depth++) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'dashboards');
    dir = dirname(dir);
  }
  throw new Error(`no package.json above ${from}`);
}

export function writeDashboards(dir: string = dashboardsDir()): string[] {
  mkdirSync(dir, { recursive: true });
  return dashboardFiles().map(({ file, json }) => {
    const path = join(dir, file);
    writeFileSync(path, json);
    return path;
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const path of writeDashboards()) console.log(`wrote ${path}`);
}
