import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckResult } from '../../src/checkers/checker.js';
import { renderReportHtml } from '../../src/report/html.js';
import { readSpansJsonl } from '../../src/run-data/spans.js';
import { buildVerdict, writeReport } from '../../src/report/write-report.js';
import type { RunData } from '../../src/run-data/run-data.js';
import { HUNG_INVOCATION, sampleRun, sampleSpans } from './sample-run.js';

const evil = '</script><script>alert(1)</script><img src=x onerror=alert(2)>\u2028';

const checks: CheckResult[] = [
  {
    name: `hang ${evil}`,
    verdict: 'fail',
    summary: `summary ${evil}`,
    evidence: { invocationIds: [HUNG_INVOCATION], details: { why: evil } },
  },
];

function evilRun(): RunData {
  const run = sampleRun();
  run.suite = `suite ${evil}`;
  run.faults = [{ ...run.faults[0]!, target: `processor-1 ${evil}`, details: { x: evil } }];
  return run;
}

test('report.html is one file: no external reference, a no-network CSP, three inline scripts only', () => {
  const html = renderReportHtml({
    run: evilRun(),
    verdicts: checks,
    spans: sampleSpans(),
    replayCommand: `npx limbo run ${evil}`,
  });
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none';/);
  assert.doesNotMatch(html, /<link\b/i);
  const markup = html.replace(/<script\b[^>]*>[\s\S]*?<\/script>/gi, '').replace(/<!--[\s\S]*?-->/g, '');
  const tags = markup.match(/<[a-z][^>]*>/gi) ?? [];
  assert.ok(tags.length > 100);
  const loading = tags.flatMap((tag) => {
    const found: string[] = [];
    for (const [, name, value] of tag.matchAll(/\s([a-z-]+)="([^"]*)"/gi))
      if (/^(src|href|action|poster|data|srcset)$/i.test(name!) && !value!.startsWith('#')) found.push(tag);
    // an unquoted attribute would not be escaped: there must be none that loads anything
    if (/\s(src|href|action|poster|data|srcset)\s*=\s*[^"\s]/i.test(tag.replace(/="[^"]*"/g, '=""')))
      found.push(tag);
    return found;
  });
  assert.deepEqual(loading, [], 'an attribute loads something');
  assert.doesNotMatch(html, /url\(\s*["']?(?!data:)[a-z]/i, 'CSS loads something');
  // every script element is one of ours: run data never opens or closes one
  assert.equal(html.match(/<script\b/gi)?.length, 3);
  assert.equal(html.match(/<\/script/gi)?.length, 3);
  assert.equal(html.match(/<img\b/gi), null);
  // the chart data survives the trip through its <script> element
  const data = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)?.[1];
  assert.ok(data !== undefined);
  assert.doesNotMatch(data, /[<\u2028\u2029]/);
  const parsed = JSON.parse(data) as { faults: { label: string }[] };
  assert.equal(parsed.faults[0]?.label, `kill processor-1 ${evil}`);
});

test('rendering is pure: the same run renders the same bytes', () => {
  const input = { run: sampleRun(), verdicts: checks, spans: sampleSpans(), replayCommand: 'x' };
  assert.equal(renderReportHtml(input), renderReportHtml(input));
});

test('a run with nothing in it still renders', () => {
  const html = renderReportHtml({
    run: {
      suite: 's',
      target: 't',
      seed: 0,
      phases: { startedAtWall: 'not a date' },
      history: [],
      series: [],
      faults: [],
    },
    verdicts: [],
    replayCommand: '',
  });
  assert.match(html, /No checks ran/);
  assert.match(html, /No faults were injected/);
  assert.match(html, /The history holds no ops/);
});

test('writeReport writes report.html beside verdict.json, with the spans of spans.jsonl', () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-report-html-'));
  try {
    const run = sampleRun();
    // a torn last line, as a killed span sink leaves it, is skipped
    writeFileSync(
      join(dir, 'spans.jsonl'),
      sampleSpans()
        .map((s) => JSON.stringify(s))
        .join('\n') + '\n{"traceId":"abc","startMs":1',
    );
    assert.equal(readSpansJsonl(join(dir, 'spans.jsonl')).length, sampleSpans().length);
    writeReport(dir, run, buildVerdict(run, checks, { durationMs: 1, replay: 'npx limbo run x' }));
    assert.ok(existsSync(join(dir, 'verdict.json')));
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    assert.match(html, /<table class="waterfall">/);
    assert.equal(html.match(/class="span-row/g)?.length, sampleSpans().length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('writeReport uses the spans the run holds, and reads spans.jsonl when the run dropped some', () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-report-html-'));
  try {
    const rows = (): number =>
      readFileSync(join(dir, 'report.html'), 'utf8').match(/class="span-row/g)?.length ?? 0;
    const verdictOf = (run: RunData): ReturnType<typeof buildVerdict> =>
      buildVerdict(run, checks, { durationMs: 1, replay: 'npx limbo run x' });
    // No spans.jsonl at all: the run's own spans are drawn.
    const held = { ...sampleRun(), spans: sampleSpans() };
    writeReport(dir, held, verdictOf(held));
    assert.equal(rows(), sampleSpans().length, 'the run data is enough');
    // A run that dropped spans holds fewer than the file: the file is read.
    writeFileSync(
      join(dir, 'spans.jsonl'),
      sampleSpans()
        .map((s) => JSON.stringify(s))
        .join('\n') + '\n',
    );
    const partial = {
      ...sampleRun(),
      spans: sampleSpans().slice(0, 1),
      spansDropped: sampleSpans().length - 1,
    };
    writeReport(dir, partial, verdictOf(partial));
    assert.equal(rows(), sampleSpans().length, 'spans.jsonl has the ones the run dropped');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without spans.jsonl the invocations are listed without waterfalls', () => {
  assert.deepEqual(readSpansJsonl('/nonexistent/spans.jsonl'), []);
  const html = renderReportHtml({ run: sampleRun(), verdicts: checks, replayCommand: 'x' });
  assert.match(html, new RegExp(`data-invocation-id="${HUNG_INVOCATION}"`));
  assert.match(html, /No spans were recorded for this run/);
  assert.doesNotMatch(html, /<table class="waterfall">/);
});
