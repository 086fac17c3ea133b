// Pieces every limbo dashboard shares, so the three dashboards look and behave alike:
// a Prometheus data source chosen by a variable (the JSON imports into any Grafana), a
// `service` filter, fault windows from the runner's `limbo_fault_active` drawn as
// annotations, and small panel helpers that keep units and legends consistent.
import * as common from '@grafana/grafana-foundation-sdk/common';
import {
  AnnotationQueryBuilder,
  DashboardBuilder,
  DashboardCursorSync,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  VariableRefresh,
  VariableSort,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import { metricNames as m } from '../../src/protocol/names.js';

/** Every panel and query reads from the data source the `datasource` variable selects. */
export const datasource = { type: 'prometheus', uid: '${datasource}' };

/** Rate window: Grafana picks one that fits the scrape interval. */
export const rateWindow = '$__rate_interval';

export interface Query {
  expr: string;
  /** Grafana legend template, e.g. `{{service}} {{kind}}`. */
  legend: string;
}

export interface PanelSpec {
  title: string;
  description: string;
  /** Grafana unit id: `s`, `short`, `reqps`, `ops`… */
  unit: string;
  queries: readonly Query[];
  /** Grid width out of 24. */
  width?: number;
  height?: number;
}

function targets(queries: readonly Query[]): DataqueryBuilder[] {
  return queries.map((q, i) =>
    new DataqueryBuilder()
      .datasource(datasource)
      .expr(q.expr)
      .legendFormat(q.legend)
      .range()
      .refId(String.fromCharCode(65 + i)),
  );
}

export function timeSeriesPanel(spec: PanelSpec): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title(spec.title)
    .description(spec.description)
    .datasource(datasource)
    .targets(targets(spec.queries))
    .unit(spec.unit)
    .min(0)
    .lineWidth(1)
    .fillOpacity(10)
    .showPoints(common.VisibilityMode.Never)
    .legend(
      new common.VizLegendOptionsBuilder()
        .displayMode(common.LegendDisplayMode.List)
        .placement(common.LegendPlacement.Bottom)
        .showLegend(true),
    )
    .tooltip(new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Multi))
    .span(spec.width ?? 12)
    .height(spec.height ?? 8);
}

/** A single current value (last point), e.g. the oldest pending age right now. */
export function statPanel(spec: PanelSpec): stat.PanelBuilder {
  return new stat.PanelBuilder()
    .title(spec.title)
    .description(spec.description)
    .datasource(datasource)
    .targets(targets(spec.queries))
    .unit(spec.unit)
    .graphMode(common.BigValueGraphMode.Area)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .span(spec.width ?? 6)
    .height(spec.height ?? 5);
}

/** `{service=~"$service"}` plus any extra matchers, for every selector on a dashboard. */
export function sel(...extra: string[]): string {
  return `{${['service=~"$service"', ...extra].join(', ')}}`;
}

/**
 * A dashboard with the shared variables (data source, service filtered to the services
 * that export `metric`) and the fault-window annotations.
 */
export function limboDashboard(uid: string, title: string, serviceMetric: string): DashboardBuilder {
  return new DashboardBuilder(title)
    .uid(uid)
    .tags(['limbo'])
    .editable()
    .tooltip(DashboardCursorSync.Crosshair)
    .refresh('5s')
    .time({ from: 'now-15m', to: 'now' })
    .timezone('browser')
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(
      new QueryVariableBuilder('service')
        .label('Service')
        .datasource(datasource)
        .query(`label_values(${serviceMetric}, service)`)
        .definition(`label_values(${serviceMetric}, service)`)
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .sort(VariableSort.AlphabeticalAsc)
        .multi(true)
        .includeAll(true)
        .allValue('.*'),
    )
    .annotation(faultWindows());
}

/**
 * Fault windows: the runner serves `limbo_fault_active{fault,target}` = 1 while a fault is
 * injected; Grafana turns each contiguous run of samples into one region.
 */
export function faultWindows(): AnnotationQueryBuilder {
  return new AnnotationQueryBuilder()
    .name('Fault windows')
    .datasource(datasource)
    .enable(true)
    .iconColor('rgba(255, 96, 96, 1)')
    .expr(`${m.faultActive} == 1`)
    .step('1s')
    .titleFormat('{{fault}}')
    .textFormat('{{fault}} on {{target}}')
    .tagKeys('fault,target')
    .useValueForTime(false);
}
