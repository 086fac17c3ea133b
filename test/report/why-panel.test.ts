// The "Why it failed" panel of report.html on hand-made runs: each diagnosis group with its
// sentence, ops, stop, wait, faults, leadership strip and example op linked to its waterfall
// (an op already listed, one added for a group none of whose ops is, or a note when there is
// none to draw); run data escaped; groups capped; no panel on a passing run.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pendingDrains } from '../../src/checkers/index.js';
import { diagnose } from '../../src/diagnose/index.js';
import { metricNames, spanAttributes as A } from '../../src/protocol/names.js';
import { escapeHtml } from '../../src/report/html-escape.js';
import { renderReportHtml } from '../../src/report/html.js';
import { buildVerdict, writeReport } from '../../src/report/write-report.js';
import type { RunSpan } from '../../src/run-data/run-data.js';
import type { CheckResult, Diagnosis, DiagnosisGroup } from '../../src/run-data/verdict.js';
import { RunBuilder } from '../helpers/run-data-builder.js';

// Partition keys that route to partitions 0 and 2 of 3.
const P0 = 'inv_10000000_';
const P2 = 'inv_c0000000_';
const EVIL_SPAN = 'ingress <img src=x onerror="window.__pwned=1"> attempt';
const EVIL_TARGET = 'processor-1</script><script>alert(1)</script>';

function span(
  traceId: string,
  spanId: string,
  service: string,
  name: string,
  startMs: number,
  endMs: number | null,
  attributes: RunSpan['attributes'],
  parentSpanId = '',
): RunSpan {
  return {
    traceId,
    spanId,
    parentSpanId,
    name,
    service,
    kind: 0,
    startMs,
    endMs,
    attributes,
    status: { code: 0, message: '' },
  };
}

function failed(name: string, invocationIds: string[]): CheckResult {
  return { name, verdict: 'fail', summary: `${name} failed`, evidence: { invocationIds, details: {} } };
}

/**
 * 20 calls on partition 0 hang without spans (they fill the report's hung list), then 3 sends on
 * partition 2 hang in an attempt whose span name is markup, while partition 2 has no leader
 * (a kill of a processor whose name is markup). The check names the calls (not the sends, bad
 * as open at the deadline) and an invocation the history does not hold.
 */
function failingRun(): { b: RunBuilder; checks: CheckResult[]; sends: string[] } {
  const b = new RunBuilder();
  b.phases(0, 8000, 14_000);
  b.fault({
    fault: 'kill',
    target: EVIL_TARGET,
    affects: ['processor-1'],
    injectedAtMs: 700,
    healedAtMs: 3700,
  });
  const lead = (node: string, partition: number, points: [number, number, number][]): void => {
    const labels = { partition: String(partition), service: node };
    b.sample(
      node,
      metricNames.processorIsLeader,
      labels,
      points.map(([t, v]) => [t, v]),
    );
    b.sample(
      node,
      metricNames.processorLeaderEpoch,
      labels,
      points.map(([t, , e]) => [t, e]),
    );
  };
  lead('processor-1', 2, [
    [250, 1, 1],
    [750, 0, 1],
  ]);
  lead('processor-2', 2, [
    [250, 0, 0],
    [5100, 1, 2],
  ]);
  lead('processor-1', 0, [[250, 1, 1]]);
  lead('processor-2', 1, [[250, 1, 1]]);
  const hung: string[] = [];
  for (let i = 0; i < 20; i++) {
    const id = `${P0}call${i}`;
    hung.push(id);
    b.invoke(500 + i, 'call', {}, id);
  }
  const spans: RunSpan[] = [];
  const sends: string[] = [];
  for (const i of [1, 2, 3]) {
    const id = `${P2}send${i}`;
    const trace = `t-${id}`;
    sends.push(id);
    const opId = b.invoke(1000 + i * 100, 'send', {}, id);
    b.run.history.find((o) => o.opId === opId)!.traceId = trace;
    const at = 1000 + i * 100;
    spans.push(
      span(trace, `${id}-c`, 'client', 'client send', at, null, { [A.invocationId]: id }),
      span(
        trace,
        `${id}-i`,
        'ingress-1',
        'ingress send',
        at + 1,
        null,
        { [A.invocationId]: id, [A.partition]: 2 },
        `${id}-c`,
      ),
      span(
        trace,
        `${id}-a`,
        'ingress-1',
        EVIL_SPAN,
        at + 10,
        null,
        { [A.partition]: 2, [A.attempt]: 1 },
        `${id}-i`,
      ),
    );
  }
  b.op(100, 200, 'ok', 'call', {}, { invocationId: `${P0}fine` });
  b.run.spans = spans;
  const checks: CheckResult[] = [
    failed('noClientLeftHanging', [...hung, `${P2}ghost`]),
    { name: 'pendingDrains', verdict: 'pass', summary: 'drained', evidence: { details: {} } },
  ];
  return { b, checks, sends };
}

/** The panel's markup, or undefined. */
function panel(html: string): string | undefined {
  return /<section id="why" class="why">[\s\S]*?<\/section>/.exec(html)?.[0];
}

/** The panel's list item for a group (by its key). */
function item(html: string, key: string): string {
  const start = html.indexOf(`data-key="${escapeHtml(key)}"`);
  assert.ok(start > 0, `no item for ${key}`);
  const ends = ['\n<li class="why-group"', '\n</ol>'].map((m) => html.indexOf(m, start)).filter((i) => i > 0);
  return html.slice(start, Math.min(...ends));
}

test('the panel tells each group: sentence, ops, stop, wait, faults, leadership strip, example linked to its waterfall', () => {
  const { b, checks, sends } = failingRun();
  const diagnosis = diagnose(b.run, checks);
  assert.ok(diagnosis);
  const html = renderReportHtml({
    run: b.run,
    verdicts: checks,
    spans: b.run.spans,
    replayCommand: 'npx limbo run x',
    diagnosis,
  });
  const why = panel(html);
  assert.ok(why, 'a panel');
  // at the top: before the verdict table
  assert.ok(html.indexOf('<section id="why"') < html.indexOf('<h2>Checks</h2>'));
  assert.match(why, /<h2>Why it failed<\/h2>/);
  assert.match(why, /24 bad op\(s\) in 3 group\(s\) by where they stopped, largest first\./);
  // largest first, as the diagnosis has them
  assert.deepEqual(
    [...why.matchAll(/<li class="why-group" id="why-(\d+)" data-key="([^"]*)" data-count="(\d+)"/g)].map(
      (m) => [m[1], m[3]],
    ),
    [
      ['1', '20'],
      ['2', '3'],
      ['3', '1'],
    ],
  );

  // the sends: stopped in the attempt (its name is markup, escaped), while partition 2 had no leader
  const sendGroup = diagnosis.groups.find((g) => g.kinds['send'] === 3)!;
  const sendItem = item(html, sendGroup.key);
  assert.ok(sendItem.includes(`<p class="why-sentence">${escapeHtml(sendGroup.sentence)}</p>`));
  assert.match(sendGroup.sentence, /^3 sends left hanging, stopped at ingress-1 in "ingress <img/);
  assert.match(sendItem, /<dd class="why-ops"><b>3<\/b> \(send ×3\) · left hanging<\/dd>/);
  assert.ok(
    sendItem.includes(
      `<dd class="why-stopped-at">ingress-1 <code>${escapeHtml(EVIL_SPAN)}</code> · partition 2</dd>`,
    ),
    sendItem,
  );
  assert.ok(sendItem.includes(`<dd class="why-waiting-for">${escapeHtml(sendGroup.waitingFor!)}</dd>`));
  assert.ok(
    sendItem.includes(`<code>kill@${escapeHtml(EVIL_TARGET)}</code> 0.7–3.7 s`),
    'the fault, named, with its window',
  );
  // the leadership strip: processor-1, a plain gap, processor-2 at epoch 2; the kill in a lane under it
  assert.deepEqual(
    [...sendItem.matchAll(/<span class="lead-seg (lead-\w+)"[^>]*title="([^"]*)">([^<]*)<\/span>/g)].map(
      (m) => [m[1], m[2], m[3]],
    ),
    [
      ['lead-led', 'processor-1 led 0.3–0.8 s, epoch 1', 'processor-1 · e1'],
      ['lead-none', 'no leader 0.8–5.1 s', 'no leader'],
      ['lead-led', 'processor-2 led 5.1–14.0 s, epoch 2', 'processor-2 · e2'],
    ],
  );
  assert.match(sendItem, /<span class="lead-fault"[^>]*>kill@processor-1&#60;\/script&#62;/);
  assert.match(sendItem, /<p class="lead-words">[^<]*no leader 0\.8–5\.1 s →/);
  // its ops are hung but not among the first 20 listed: one is added, as an example, with its waterfall
  const example =
    /<a class="why-example-link" href="#(inv-(\d+))">op \d+ · ([^ ]+) — its waterfall<\/a>/.exec(sendItem);
  assert.ok(example, sendItem);
  assert.equal(example[3], sends[0]);
  const section = new RegExp(
    `<section class="invocation" id="${example[1]}" data-reason="example"[\\s\\S]*?</section>`,
  ).exec(html)?.[0];
  assert.ok(section, 'the example op is listed with its waterfall');
  assert.equal(section.match(/class="span-row/g)?.length, 3);
  assert.ok(sendItem.includes(`npx limbo trace ${sends[0]} --run &lt;run directory&gt;`));
  assert.match(sendItem, new RegExp(`also <code>${sends[1]}</code> <code>${sends[2]}</code></p>`));

  // the calls had no spans: their example is listed (hung) but has no waterfall, and the panel says so
  const callItem = item(html, diagnosis.groups[0]!.key);
  assert.match(callItem, /hop unknown · partition 0/);
  assert.match(
    callItem,
    /href="#inv-1">op 1 · inv_10000000_call0 — its entry<\/a> <span class="muted">\(no spans of this op were recorded: it has no waterfall\)/,
  );
  assert.match(callItem, /… and 14 more<\/p>/);
  // the invocation the history does not hold: named, no link
  const ghost = item(html, diagnosis.groups[2]!.key);
  assert.match(
    ghost,
    /Example: <code>inv_c0000000_ghost<\/code> <span class="muted">\(not in the client history: no waterfall here\)/,
  );
  assert.doesNotMatch(ghost, /why-example-link/);

  // nothing from the run became markup, and the file still holds only its own three scripts
  assert.equal(why.match(/<img\b/gi), null);
  assert.equal(why.match(/<script\b/gi), null);
  assert.equal(html.match(/<script\b/gi)?.length, 3);
  assert.equal(html.match(/<img\b/gi), null);
});

test('groups are capped: the largest eight are shown, the rest counted', () => {
  const { b, checks } = failingRun();
  const group = (i: number): DiagnosisGroup => ({
    key: `svc-${i} / span / partition 0`,
    service: `svc-${i}`,
    span: 'span',
    partition: 0,
    count: 20 - i,
    problem: 'left hanging',
    checks: ['noClientLeftHanging'],
    kinds: { call: 20 - i },
    invocationIds: [],
    faults: [],
    leadership: [],
    sentence: `group ${i}.`,
  });
  const diagnosis: Diagnosis = {
    badOps: 200,
    traced: true,
    groups: Array.from({ length: 12 }, (_, i) => group(i)),
    ops: [],
  };
  const why = panel(
    renderReportHtml({ run: b.run, verdicts: checks, spans: b.run.spans, replayCommand: 'x', diagnosis }),
  );
  assert.ok(why);
  assert.equal(why.match(/<li class="why-group"/g)?.length, 8);
  assert.match(why, /<p class="why-sentence">group 7\.<\/p>/);
  assert.doesNotMatch(why, /group 8\./);
  assert.match(why, /… 4 more group\(s\), 42 op\(s\): verdict.json "diagnosis"\./);
  assert.match(why, /Leadership of partition 0: not reported/);
  assert.match(why, /No op of this group can be shown/);
});

test('a passing run, or a failing one without a diagnosis, has no panel; writeReport draws it from verdict.json', () => {
  const { b, checks } = failingRun();
  const passing: CheckResult[] = [
    { name: 'pendingDrains', verdict: 'pass', summary: 'drained', evidence: { details: {} } },
  ];
  assert.equal(diagnose(b.run, passing), undefined);
  const render = (verdicts: CheckResult[], diagnosis?: Diagnosis): string =>
    renderReportHtml({
      run: b.run,
      verdicts,
      spans: b.run.spans,
      replayCommand: 'x',
      ...(diagnosis !== undefined ? { diagnosis } : {}),
    });
  assert.equal(panel(render(passing)), undefined);
  assert.doesNotMatch(render(passing), /<section id="why"|Why it failed|class="why-group"/);
  assert.equal(panel(render(checks)), undefined, 'no diagnosis given, no panel');
  assert.doesNotMatch(render(checks), /data-reason="example"/);
  const dir = mkdtempSync(join(tmpdir(), 'limbo-why-'));
  try {
    const diagnosis = diagnose(b.run, checks)!;
    writeReport(dir, b.run, buildVerdict(b.run, checks, { durationMs: 1, replay: 'x', diagnosis }));
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    assert.ok(panel(html)?.includes(escapeHtml(diagnosis.groups[0]!.sentence)));
    writeReport(dir, b.run, buildVerdict(b.run, passing, { durationMs: 1, replay: 'x' }));
    assert.equal(panel(readFileSync(join(dir, 'report.html'), 'utf8')), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a failed check that names no op but its moment: the panel says why in its sentence, with no op groups', () => {
  const b = new RunBuilder();
  b.phases(1000, 6000, 9000);
  b.op(100, 200, 'ok', 'call');
  b.fault({ fault: 'reset_peer', target: EVIL_TARGET, injectedAtMs: 2000, healedAtMs: 4000 });
  const points: [number, number][] = [];
  for (let t = 0; t <= 9000; t += 250) points.push([t, t < 2500 ? 0 : 2]);
  b.sample('ingress-1', metricNames.ingressPendingRequests, {}, points);
  const checks = [pendingDrains({ metrics: [metricNames.ingressPendingRequests] }).check(b.run)];
  assert.equal(checks[0]!.verdict, 'fail', checks[0]!.summary);
  const diagnosis = diagnose(b.run, checks);
  const finding = diagnosis?.findings?.[0];
  assert.ok(diagnosis !== undefined && finding !== undefined);
  const html = renderReportHtml({ run: b.run, verdicts: checks, spans: [], replayCommand: 'x', diagnosis });
  const shown = panel(html);
  assert.ok(shown !== undefined, 'a finding alone makes the panel');
  assert.ok(shown.includes(escapeHtml(finding.sentence)), shown);
  assert.match(shown, /data-check="pendingDrains"/);
  assert.doesNotMatch(shown, /class="why-group"|bad op\(s\)/);
  assert.doesNotMatch(html, /<script>alert\(1\)/, 'the fault target is escaped');
});
