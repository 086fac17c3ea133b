// report.html: everything about one run in a single file a user opens from the run directory
// with no server and no network — the verdict table with each check's evidence, charts of
// the signals with fault windows shaded, the hung or slowest invocations with their trace
// waterfall, and the seed and replay command; a failing run with a diagnosis opens with the
// "Why it failed" panel (html-diagnosis); the run's fault space and, with --coverage, its code
// coverage (html-coverage). Pure: same input, same bytes.
//
//   RunData + verdicts + spans ─▶ chart columns (chart-data)      ┐
//                                 notable invocations             │
//                                 waterfalls (html-waterfall)     ├─▶ HTML + inlined uPlot + client script
//   fault space, code coverage ─▶ grid, figures (html-coverage)   ┘
import { combineVerdicts, type CheckResult, type Diagnosis, type Evidence } from '../run-data/verdict.js';
import { pairOps, runEndMs, type RunData, type SeriesSample } from '../run-data/run-data.js';
import type { RunSpan as SpanRecord } from '../run-data/spans.js';
import { buildCharts, type ChartSpec } from './chart-data.js';
import { invocationAnchor, whyExamples, whySection, type WhyExample } from './html-diagnosis.js';
import type { FaultSpace } from '../coverage/fault-space.js';
import { coverageSection, faultSpaceSection, type CodeCoverage } from './html-coverage.js';
import { escapeHtml as h, jsonForScript } from './html-escape.js';
import { fmtMs, renderHtmlWaterfall, spansForInvocation, type EpochFaultWindow } from './html-waterfall.js';
import { notableInvocations, type NotableInvocation } from './invocations.js';
import { loadReportAssets } from './report-assets.js';
import { reportClientScript } from './report-client.js';
import { reportStyle } from './report-style.js';

export interface ReportHtmlInput {
  run: RunData;
  verdicts: readonly CheckResult[];
  /** The run's spans (epoch ms), for the waterfalls; none means no trace section content. */
  spans?: readonly SpanRecord[];
  replayCommand: string;
  /** Problems of the run itself (from verdict.json). */
  runErrors?: readonly string[];
  durationMs?: number;
  /** Why the run failed (verdict.json "diagnosis"): the panel at the top; absent, no panel. */
  diagnosis?: Diagnosis;
  /** What the run's faults struck (its fault-space.json): the Fault space panel. */
  faultSpace?: FaultSpace;
  /** The run's code coverage (its coverage.json); absent, the panel says how to measure it. */
  coverage?: CodeCoverage;
  /** Why the run has no coverage although it was asked for (plain text): shown instead of the default. */
  coverageMissing?: string;
}

/** Bounds so a huge run still gives a file a browser opens. */
const MAX_EVIDENCE_CHARS = 20_000;
const MAX_EVIDENCE_SAMPLES = 50;
const MAX_EVIDENCE_IDS = 100;

/** Client-side data: what the charts script reads from <script id="report-data">. */
interface ClientData {
  charts: ChartSpec[];
  faults: { fault: string; label: string; fromS: number; toS: number | null }[];
  phases: { label: string; atS: number }[];
  endS: number;
}

export function renderReportHtml(input: ReportHtmlInput): string {
  const { run, verdicts } = input;
  const assets = loadReportAssets();
  const endMs = runEndMs(run);
  const notable = notableInvocations(run, verdicts);
  let examples: WhyExample[] = [];
  if (input.diagnosis !== undefined) {
    const why = whyExamples(run, input.diagnosis, input.spans ?? [], notable.list);
    examples = why.examples;
    notable.list.push(...why.added);
  }
  const anchors = new Map<string, string>();
  for (const n of notable.list)
    if (n.invocationId !== undefined && !anchors.has(n.invocationId))
      anchors.set(n.invocationId, invocationAnchor(n.pair.invoke.opId));
  const client: ClientData = {
    charts: buildCharts(run),
    faults: run.faults.map((f) => ({
      fault: f.fault,
      label: `${f.fault} ${f.target}`,
      fromS: f.injectedAtMs / 1000,
      toS: f.healedAtMs === undefined ? null : f.healedAtMs / 1000,
    })),
    phases: phaseList(run)
      .filter((p) => p.atMs !== undefined && p.label !== 'start')
      .map((p) => ({ label: p.label, atS: (p.atMs as number) / 1000 })),
    endS: endMs / 1000,
  };
  const overall = combineVerdicts(verdicts.map((v) => v.verdict));
  const title = `limbo · ${run.suite} [${run.target}] · ${overall}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${h(title)}</title>
<style>${assets.uplotCss}</style>
<style>${reportStyle}</style>
</head>
<body>
<main>
${header(input, overall, endMs, notable.hungTotal)}
${whySection(input.diagnosis, examples, anchors, (input.spans ?? []).length > 0)}
${checksSection(verdicts, anchors)}
${chartsSection(client.charts)}
${faultsSection(run)}
${faultSpaceSection(input.faultSpace)}
${coverageSection(input.coverage, input.replayCommand, input.coverageMissing)}
${phasesSection(run)}
${invocationsSection(input, notable.list, notable.hungTotal)}
<footer>Generated by limbo. Charts drawn with uPlot ${h(assets.uplotVersion)} (MIT licence, inlined below). This file makes no network requests.</footer>
</main>
<script type="application/json" id="report-data">${jsonForScript(client)}</script>
<!-- uPlot ${h(assets.uplotVersion)}, https://github.com/leeoniya/uPlot
${h(assets.uplotLicense)}
-->
<script>${assets.uplotJs}</script>
<script>${reportClientScript}</script>
</body>
</html>
`;
}

// ------------------------------------------------------------------ sections

function header(input: ReportHtmlInput, overall: string, endMs: number, hungTotal: number): string {
  const { run } = input;
  const ops = opCounts(run);
  const duration = input.durationMs ?? run.phases.endedAtMs ?? endMs;
  const item = (k: string, v: string): string => `<div><span>${h(k)}</span>${v}</div>`;
  const errors = (input.runErrors ?? []).length
    ? `<h2>Run errors</h2><ul id="run-errors">${(input.runErrors ?? []).map((e) => `<li>${h(e)}</li>`).join('')}</ul>`
    : '';
  return `<header>
<h1>${h(run.suite)} <span class="muted">on</span> ${h(run.target)} <span class="badge overall ${h(overall)}" id="overall-verdict">${h(overall)}</span></h1>
<div class="meta">
${item('suite', `<b id="suite">${h(run.suite)}</b>`)}
${item('target', `<b id="target">${h(run.target)}</b>`)}
${item('seed', `<b id="seed" class="mono">${run.seed}</b>`)}
${item('started', h(run.phases.startedAtWall))}
${item('duration', h(fmtMs(duration)))}
${item('ops', h(`${ops.total} (ok ${ops.ok}, fail ${ops.fail}, info ${ops.info}, open ${ops.open})`))}
${item('hung', `<b>${hungTotal}</b>`)}
${item('faults', String(run.faults.length))}
</div>
<h3>Replay</h3>
<pre id="replay">${h(input.replayCommand)}</pre>
${errors}
</header>`;
}

function opCounts(run: RunData): Record<'total' | 'ok' | 'fail' | 'info' | 'open', number> {
  const counts = { total: 0, ok: 0, fail: 0, info: 0, open: 0 };
  for (const { end } of pairOps(run.history)) {
    counts.total++;
    counts[end === undefined ? 'open' : end.type === 'invoke' ? 'open' : end.type]++;
  }
  return counts;
}

function checksSection(verdicts: readonly CheckResult[], anchors: Map<string, string>): string {
  const rows = verdicts.map(
    (c) =>
      `<tr class="check verdict-${h(c.verdict)}" data-verdict="${h(c.verdict)}">` +
      `<td class="check-name">${h(c.name)}</td>` +
      `<td class="check-verdict"><span class="badge ${h(c.verdict)}">${h(c.verdict)}</span></td>` +
      `<td><div class="check-summary">${h(c.summary)}</div>${evidenceHtml(c.evidence, anchors)}</td></tr>`,
  );
  const empty = verdicts.length === 0 ? '<tr><td colspan="3" class="muted">No checks ran.</td></tr>' : '';
  return `<h2>Checks</h2>
<table id="checks"><thead><tr><th>check</th><th>verdict</th><th>summary and evidence</th></tr></thead>
<tbody>${rows.join('\n')}${empty}</tbody></table>`;
}

function evidenceHtml(e: Evidence, anchors: Map<string, string>): string {
  const parts: string[] = [];
  const ids = (label: string, list: readonly string[] | undefined, link: boolean): void => {
    if (list === undefined || list.length === 0) return;
    const shown = list.slice(0, MAX_EVIDENCE_IDS).map((id) => {
      const anchor = link ? anchors.get(id) : undefined;
      return anchor === undefined
        ? `<code>${h(id)}</code>`
        : `<a href="#${h(anchor)}"><code>${h(id)}</code></a>`;
    });
    const more = list.length > MAX_EVIDENCE_IDS ? ` … and ${list.length - MAX_EVIDENCE_IDS} more` : '';
    parts.push(`<p>${h(label)} (${list.length}): ${shown.join(' ')}${more}</p>`);
  };
  ids('invocation ids', e.invocationIds, true);
  ids('trace ids', e.traceIds, false);
  if (e.series !== undefined && e.series.length > 0) parts.push(seriesTable(e.series));
  let details = JSON.stringify(e.details, null, 2) ?? '{}';
  if (details.length > MAX_EVIDENCE_CHARS) details = `${details.slice(0, MAX_EVIDENCE_CHARS)}\n… (truncated)`;
  if (details !== '{}') parts.push(`<pre>${h(details)}</pre>`);
  if (parts.length === 0) return '';
  return `<details class="evidence"><summary>evidence</summary>${parts.join('')}</details>`;
}

function seriesTable(series: readonly SeriesSample[]): string {
  const rows = series
    .slice(0, MAX_EVIDENCE_SAMPLES)
    .map(
      (s) =>
        `<tr><td class="num">${(s.tMs / 1000).toFixed(2)} s</td><td>${h(s.service)}</td><td class="mono">${h(s.name)}${h(labelText(s.labels))}</td><td class="num">${s.value}</td></tr>`,
    );
  const more =
    series.length > MAX_EVIDENCE_SAMPLES
      ? `<p class="muted">${series.length - MAX_EVIDENCE_SAMPLES} more samples not shown.</p>`
      : '';
  return `<table class="samples"><thead><tr><th>t</th><th>service</th><th>series</th><th>value</th></tr></thead><tbody>${rows.join('')}</tbody></table>${more}`;
}

function labelText(labels: Record<string, string>): string {
  const entries = Object.entries(labels);
  return entries.length === 0 ? '' : `{${entries.map(([k, v]) => `${k}="${v}"`).join(', ')}}`;
}

function chartsSection(charts: readonly ChartSpec[]): string {
  const boxes = charts.map(
    (c) =>
      `<figure class="chart-box" data-chart="${h(c.id)}"><h3>${h(c.title)}</h3>` +
      `<figcaption>${h(c.source)} · ${h(c.unit)} · fault windows shaded, phases dashed</figcaption>` +
      `<div class="chart" id="chart-${h(c.id)}"></div></figure>`,
  );
  return `<h2>Signals</h2>
<noscript><p>The charts need JavaScript (inlined in this file; nothing is fetched).</p></noscript>
<div class="charts" id="charts">${boxes.join('\n')}</div>`;
}

function faultsSection(run: RunData): string {
  const rows = run.faults.map((f, i) => {
    const healed = f.healedAtMs;
    const cls = healed === undefined ? 'fault-window never-healed' : 'fault-window';
    return (
      `<tr class="${cls}" data-index="${i}" data-fault="${h(f.fault)}" data-from-ms="${f.injectedAtMs}" data-to-ms="${healed ?? ''}">` +
      `<td>${h(f.fault)}</td><td>${h(f.target)}${f.leader === true ? ' <span class="muted">(leader)</span>' : ''}</td>` +
      `<td>${h(f.affects.join(', '))}</td>` +
      `<td class="num">${(f.injectedAtMs / 1000).toFixed(2)} s</td>` +
      `<td class="num">${healed === undefined ? '<b>never healed</b>' : `${(healed / 1000).toFixed(2)} s`}</td>` +
      `<td class="num">${healed === undefined ? '–' : h(fmtMs(healed - f.injectedAtMs))}</td>` +
      `<td class="mono">${f.details === undefined ? '' : h(JSON.stringify(f.details))}</td></tr>`
    );
  });
  const empty =
    rows.length === 0 ? '<tr><td colspan="7" class="muted">No faults were injected.</td></tr>' : '';
  return `<h2>Fault windows</h2>
<table id="faults"><thead><tr><th>fault</th><th>target</th><th>affects</th><th>injected</th><th>healed</th><th>for</th><th>details</th></tr></thead>
<tbody>${rows.join('\n')}${empty}</tbody></table>`;
}

function phaseList(run: RunData): { label: string; atMs: number | undefined }[] {
  const p = run.phases;
  return [
    { label: 'start', atMs: 0 },
    { label: 'warm-up', atMs: p.warmupStartMs },
    { label: 'chaos', atMs: p.chaosStartMs },
    { label: 'heal', atMs: p.chaosEndMs },
    { label: 'healed', atMs: p.healedAtMs },
    { label: 'deadline', atMs: p.deadlineMs },
    { label: 'end', atMs: p.endedAtMs },
  ];
}

function phasesSection(run: RunData): string {
  const wall0 = Date.parse(run.phases.startedAtWall);
  const rows = phaseList(run)
    .filter((p) => p.atMs !== undefined)
    .map((p) => {
      const at = p.atMs as number;
      const wall = Number.isNaN(wall0) ? '' : new Date(wall0 + at).toISOString();
      return `<tr data-phase="${h(p.label)}"><td>${h(p.label)}</td><td class="num">${(at / 1000).toFixed(2)} s</td><td class="mono">${h(wall)}</td></tr>`;
    });
  return `<h2>Phases</h2>
<table id="phases"><thead><tr><th>phase</th><th>at</th><th>wall time</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function invocationsSection(
  input: ReportHtmlInput,
  list: readonly NotableInvocation[],
  hungTotal: number,
): string {
  const { run } = input;
  const spans = input.spans ?? [];
  const wall0 = Date.parse(run.phases.startedAtWall);
  const faults: EpochFaultWindow[] = Number.isNaN(wall0)
    ? []
    : run.faults.map((f) => ({
        label: `${f.fault} ${f.target}`,
        startMs: wall0 + f.injectedAtMs,
        endMs: f.healedAtMs === undefined ? undefined : wall0 + f.healedAtMs,
      }));
  const shownHung = list.filter((n) => n.reason === 'hung').length;
  const intro =
    hungTotal > 0
      ? `<p><b>${hungTotal}</b> op(s) never ended${hungTotal > shownHung ? `; the first ${shownHung} are shown` : ''}, then the ops failed checks name and the slowest ones.</p>`
      : '<p>No op was left hanging; the slowest ops (and any a failed check names) are shown.</p>';
  const examples = list.filter((n) => n.reason === 'example').length;
  const exampleNote =
    examples > 0
      ? `<p class="muted">${examples} op(s) marked example stand for a group of "Why it failed" none of whose ops is listed otherwise.</p>`
      : '';
  const sections = list.map((n) => {
    const { invoke, end } = n.pair;
    const outcome =
      end === undefined
        ? 'never ended'
        : `${end.type}${end.response?.status === undefined ? '' : ` ${end.response.status}`}${end.error === undefined ? '' : ` — ${end.error.code}: ${end.error.message}`}`;
    const req = invoke.request === undefined ? '' : `${invoke.request.method} ${invoke.request.path}`;
    const mine = spansForInvocation(spans, n.invocationId, n.traceId);
    const waterfall =
      spans.length === 0
        ? '<p class="muted">No spans were recorded for this run.</p>'
        : renderHtmlWaterfall(mine, faults);
    return `<section class="invocation" id="${invocationAnchor(invoke.opId)}" data-reason="${n.reason}" data-invocation-id="${h(n.invocationId ?? '')}">
<h3><span class="badge ${n.reason}">${n.reason}</span> <span>op ${invoke.opId} · ${h(invoke.kind)} · ${h(req)}</span></h3>
<div class="meta">
<div><span>invocation</span><code>${h(n.invocationId ?? '–')}</code></div>
<div><span>trace</span><code>${h(n.traceId ?? '–')}</code></div>
<div><span>client</span>${invoke.process}</div>
<div><span>invoked at</span>${(invoke.timeMs / 1000).toFixed(2)} s</div>
<div><span>${end === undefined ? 'open for' : 'took'}</span>${h(fmtMs(n.durationMs))}</div>
<div><span>outcome</span>${h(outcome)}</div>
</div>
${waterfall}
</section>`;
  });
  const none = list.length === 0 ? '<p class="muted">The history holds no ops.</p>' : '';
  return `<h2>Invocations</h2>
<div id="invocations">${intro}${exampleNote}${sections.join('\n')}${none}</div>`;
}
