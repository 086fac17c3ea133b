// The committed dashboard JSON is what the TypeScript generates, and every query uses only
// the public metric names (src/protocol/names.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { metricNames } from '../../src/protocol/names.js';
import {
  dashboardExpressions,
  dashboardFiles,
  dashboardsDir,
  interpolate,
  metricsRead,
} from '../../dashboards/src/generate.js';

const dir = dashboardsDir();
const known = new Set<string>(Object.values(metricNames));

test('committed dashboard JSON is up to date (run `npm run dashboards`)', () => {
  const files = dashboardFiles();
  assert.deepEqual(
    readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort(),
    files.map((f) => f.file).sort(),
    'no stray or missing dashboard files',
  );
  for (const { file, json } of files) {
    assert.equal(readFileSync(join(dir, file), 'utf8'), json, `${file} is stale: run npm run dashboards`);
  }
});

test('dashboards have unique uids, and every panel has a query', () => {
  const files = dashboardFiles();
  assert.equal(new Set(files.map((f) => f.dashboard.uid)).size, files.length);
  for (const { dashboard } of files) {
    const panels = (dashboard.panels ?? []).filter((p) => p.type !== 'row');
    assert.ok(panels.length > 0, `${dashboard.title} has panels`);
    const withQuery = new Set(dashboardExpressions([dashboard]).map((e) => e.panel));
    for (const p of panels)
      assert.ok(withQuery.has(p.title ?? ''), `${dashboard.title}: ${p.title} has a query`);
    assert.ok(withQuery.has('annotation: Fault windows'), `${dashboard.title} draws fault windows`);
  }
});

test('every query reads public metric names only', () => {
  const used = new Set<string>();
  for (const e of dashboardExpressions()) {
    const names = metricsRead(e.expr);
    assert.ok(names.length > 0, `${e.dashboard} / ${e.panel} reads a limbo metric`);
    for (const n of names) {
      assert.ok(known.has(n), `${e.dashboard} / ${e.panel}: ${n} is not in src/protocol/names.ts`);
      used.add(n);
    }
  }
  // The contract's signals are all on some dashboard (leadership: processors and controller).
  for (const n of Object.values(metricNames)) assert.ok(used.has(n), `${n} is on a dashboard`);
});

test('interpolate turns Grafana variables into plain PromQL', () => {
  assert.equal(
    interpolate(
      'sum(rate(x{service=~"$service", partition=~"${partition}"}[$__rate_interval])) + y[$__range]',
      {
        rateWindow: '30s',
        range: '5m',
      },
    ),
    'sum(rate(x{service=~".*", partition=~".*"}[30s])) + y[5m]',
  );
});
