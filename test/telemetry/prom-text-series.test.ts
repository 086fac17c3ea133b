// The scraper keeps every sample of a run: a sample must not keep the page it was parsed from
// alive (its name and labels would otherwise be substrings of the whole /metrics text).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePrometheusText, type SeriesKey } from '../../src/telemetry/prom-text.js';
import { collectGarbage } from '../../src/launch/gc.js';

/** A /metrics page of ~23 KiB, mostly metrics the scraper does not keep; `n` makes it a new string. */
function page(n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < 300; i++)
    lines.push(`# HELP nodejs_thing_${i} some help text for it`, `nodejs_thing_${i}{a="b"} ${i}`);
  for (let p = 0; p < 10; p++)
    lines.push(`limbo_pending_requests{service="processor-1",partition="${p}"} ${n}`);
  return lines.join('\n');
}
const keep = (name: string): boolean => name.startsWith('limbo_');

test('samples of one series share their name and labels, equal to a parse without the cache', () => {
  const series = new Map<string, SeriesKey>();
  const a = parsePrometheusText(page(1), keep, series);
  const b = parsePrometheusText(page(2), keep, series);
  assert.equal(a.length, 10);
  assert.deepEqual(a, parsePrometheusText(page(1), keep));
  assert.equal(series.size, 10, 'one entry per series');
  for (let i = 0; i < a.length; i++) {
    assert.equal(b[i]!.labels, a[i]!.labels, 'the same labels object');
    assert.equal(b[i]!.value, 2);
  }
  assert.deepEqual(a[3]!.labels, { service: 'processor-1', partition: '3' });
});

test('kept samples do not keep the scraped pages alive', () => {
  const series = new Map<string, SeriesKey>();
  const kept: unknown[] = [];
  assert.ok(collectGarbage());
  const before = process.memoryUsage().heapUsed;
  // 2,000 pages (~46 MiB of text) → 20,000 samples; holding the pages would cost all of it.
  for (let n = 0; n < 2000; n++) kept.push(...parsePrometheusText(page(n), keep, series));
  assert.ok(collectGarbage());
  const grown = process.memoryUsage().heapUsed - before;
  assert.equal(kept.length, 20_000);
  assert.ok(grown < 12 * 1024 * 1024, `heap grew ${(grown / 1048576).toFixed(1)} MiB for 20,000 samples`);
});
