// The "Why it failed" panel at the top of report.html: the run's diagnosis (verdict.json
// "diagnosis", src/diagnose/) group by group, largest first — its sentence, its ops, where they
// stopped and what they waited for, the faults they met, its partition's leadership as a strip,
// and a link to the waterfall of one example op. Server-rendered and escaped: it reads the same
// without JavaScript. Bounded: at most MAX_GROUPS groups, a few ids each.
//
//   diagnosis ─▶ groups (capped) ─▶ example op per group (one already listed, else added) ─▶ HTML
import { describeLeadership, faultText, groupKeyOf, sec } from '../diagnose/index.js';
import { spanAttributes as A } from '../protocol/names.js';
import { invocationIdOf, pairOps, runEndMs, type PairedOp, type RunData } from '../run-data/run-data.js';
import type { RunSpan } from '../run-data/spans.js';
import type { Diagnosis, DiagnosisGroup, LeadershipStretch } from '../run-data/verdict.js';
import { escapeHtml as h } from './html-escape.js';
import { describeInvocation, type NotableInvocation } from './invocations.js';

/** Groups shown (the rest are counted), ids listed per group, leadership stretches and faults drawn per group. */
export const MAX_GROUPS = 8;
const MAX_IDS = 5;
const MAX_STRETCHES = 30;
const MAX_FAULTS = 8;
/** Ops of a group considered for its example. */
const MAX_CANDIDATES = 50;

/** The op of a group the panel links to: listed in the invocations section (anchor) or not in the history at all. */
export interface WhyExample {
  opId?: number;
  invocationId?: string;
  /** The id of its section in the invocations list. */
  anchor?: string;
  /** Whether the run holds spans of it (its section draws a waterfall). */
  hasSpans: boolean;
}

export interface WhyExamples {
  /** One per shown group, in the order of `diagnosis.groups`. */
  examples: WhyExample[];
  /** Ops to add to the invocations list (reason `example`) so their waterfalls are drawn. */
  added: NotableInvocation[];
}

/**
 * An example op for each shown group: one with spans already in `listed` if any, else one
 * with spans (added), else one already listed, else the group's first op (added).
 */
export function whyExamples(
  run: RunData,
  diagnosis: Diagnosis,
  spans: readonly RunSpan[],
  listed: readonly NotableInvocation[],
): WhyExamples {
  const pairs = pairOps(run.history);
  const byOpId = new Map<number, PairedOp>();
  const byInvocation = new Map<string, PairedOp>();
  for (const p of pairs) {
    byOpId.set(p.invoke.opId, p);
    const id = invocationIdOf(p);
    if (id !== undefined && !byInvocation.has(id)) byInvocation.set(id, p);
  }
  const spanInvocations = new Set<string>();
  const spanTraces = new Set<string>();
  for (const s of spans) {
    spanTraces.add(s.traceId);
    const id = s.attributes[A.invocationId];
    if (typeof id === 'string') spanInvocations.add(id);
  }
  const hasSpans = (p: PairedOp): boolean => {
    const id = invocationIdOf(p);
    const trace = p.end?.traceId ?? p.invoke.traceId;
    return (id !== undefined && spanInvocations.has(id)) || (trace !== undefined && spanTraces.has(trace));
  };
  const shown = new Set(listed.map((n) => n.pair.invoke.opId));
  const endMs = runEndMs(run);
  const added: NotableInvocation[] = [];
  const examples = diagnosis.groups.slice(0, MAX_GROUPS).map((g): WhyExample => {
    const candidates = new Map<number, PairedOp>();
    for (const op of diagnosis.ops) {
      if (candidates.size >= MAX_CANDIDATES) break;
      const p = op.opId !== undefined ? byOpId.get(op.opId) : undefined;
      if (p !== undefined && groupKeyOf(op) === g.key) candidates.set(p.invoke.opId, p);
    }
    for (const id of g.invocationIds) {
      if (candidates.size >= MAX_CANDIDATES) break;
      const p = byInvocation.get(id);
      if (p !== undefined) candidates.set(p.invoke.opId, p);
    }
    const list = [...candidates.values()];
    const pick =
      list.find((p) => shown.has(p.invoke.opId) && hasSpans(p)) ??
      list.find(hasSpans) ??
      list.find((p) => shown.has(p.invoke.opId)) ??
      list[0];
    if (pick === undefined) {
      const id = g.invocationIds[0];
      return { ...(id !== undefined ? { invocationId: id } : {}), hasSpans: false };
    }
    const opId = pick.invoke.opId;
    if (!shown.has(opId)) {
      added.push(describeInvocation(pick, 'example', endMs));
      shown.add(opId);
    }
    const invocationId = invocationIdOf(pick);
    return {
      opId,
      ...(invocationId !== undefined ? { invocationId } : {}),
      anchor: invocationAnchor(opId),
      hasSpans: hasSpans(pick),
    };
  });
  return { examples, added };
}

/** The id of an op's section in the invocations list. */
export function invocationAnchor(opId: number): string {
  return `inv-${opId}`;
}

/**
 * The panel; '' when the run has no diagnosis (a passing run, or no check that failed named an
 * op or the moment of what it saw). Findings that name no op come first, then the op groups.
 */
export function whySection(
  diagnosis: Diagnosis | undefined,
  examples: readonly WhyExample[],
  anchors: ReadonlyMap<string, string>,
  runHasSpans: boolean,
): string {
  if (diagnosis === undefined) return '';
  const findings = diagnosis.findings ?? [];
  const findingsHtml =
    findings.length === 0
      ? ''
      : `<ul class="why-findings">
${findings
  .slice(0, MAX_GROUPS)
  .map(
    (f) =>
      `<li class="why-finding" data-check="${h(f.check)}"><p class="why-sentence">${h(f.sentence)}</p></li>`,
  )
  .join('\n')}
</ul>`;
  if (diagnosis.groups.length === 0)
    return findingsHtml === ''
      ? ''
      : `<section id="why" class="why">
<h2>Why it failed</h2>
${findingsHtml}
</section>`;
  const shown = diagnosis.groups.slice(0, MAX_GROUPS);
  const rest = diagnosis.groups.slice(MAX_GROUPS);
  const untraced = diagnosis.traced
    ? ''
    : ' The run has no spans: every hop is unknown and ops are grouped by partition and problem.';
  const more =
    rest.length > 0
      ? `<p class="muted" id="why-more">… ${rest.length} more group(s), ${rest.reduce((n, g) => n + g.count, 0)} op(s): verdict.json "diagnosis".</p>`
      : '';
  const items = shown.map((g, i) => groupItem(g, i, examples[i], anchors, runHasSpans));
  return `<section id="why" class="why">
<h2>Why it failed</h2>
${findingsHtml}
<p class="why-summary">${diagnosis.badOps} bad op(s) in ${diagnosis.groups.length} group(s) by where they stopped, largest first.${h(untraced)}</p>
<ol class="why-groups">
${items.join('\n')}
</ol>
${more}
</section>`;
}

function groupItem(
  g: DiagnosisGroup,
  i: number,
  example: WhyExample | undefined,
  anchors: ReadonlyMap<string, string>,
  runHasSpans: boolean,
): string {
  const facts: [string, string][] = [];
  const kinds = Object.entries(g.kinds)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => `${h(k)} ×${n}`)
    .join(', ');
  facts.push(['ops', `<b>${g.count}</b>${kinds !== '' ? ` (${kinds})` : ''} · ${h(g.problem)}`]);
  facts.push(['named by', g.checks.map((c) => `<code>${h(c)}</code>`).join(' ')]);
  const partition = g.partition !== undefined ? ` · partition ${g.partition}` : '';
  facts.push([
    g.endedWith !== undefined ? 'answered from' : 'stopped at',
    g.service === 'unknown'
      ? `hop unknown${h(partition)}`
      : `${h(g.service)} <code>${h(g.span)}</code>${h(partition)}`,
  ]);
  if (g.waitingFor !== undefined) facts.push(['waiting for', h(g.waitingFor)]);
  if (g.endedWith !== undefined) facts.push(['failed with', `<code>${h(g.endedWith)}</code>`]);
  if (g.lastHop !== undefined) {
    const l = g.lastHop;
    const at = sec(l.fromMs) === sec(l.toMs) ? `${sec(l.fromMs)} s` : `${sec(l.fromMs)}–${sec(l.toMs)} s`;
    facts.push([
      'furthest hop',
      `${h(l.service)} <code>${h(l.span)}</code> at ${h(at)} (${l.count} op${l.count === 1 ? '' : 's'})`,
    ]);
  }
  facts.push(['faults met', faultsHtml(g)]);
  const dl = facts.map(([k, v]) => `<dt>${h(k)}</dt><dd class="why-${h(k.replace(/ /g, '-'))}">${v}</dd>`);
  return `<li class="why-group" id="why-${i + 1}" data-key="${h(g.key)}" data-count="${g.count}">
<p class="why-sentence">${h(g.sentence)}</p>
<dl class="why-facts">${dl.join('')}</dl>
${leadershipHtml(g)}
${exampleHtml(g, example, anchors, runHasSpans)}
</li>`;
}

function faultsHtml(g: DiagnosisGroup): string {
  if (g.faults.length === 0) return 'none (no fault was in)';
  const during = g.faults.filter((f) => f.before !== true);
  if (during.length === 0)
    return `none while they lived; the last one healed before them: ${h(faultText(g.faults[0]!))}`;
  const items = during
    .slice(0, MAX_FAULTS)
    .map(
      (f) =>
        `<li class="why-fault" data-fault="${h(f.name)}"><code>${h(f.name)}</code> ${h(sec(f.fromMs))}–${f.toMs !== undefined ? `${h(sec(f.toMs))} s` : 'never healed'}</li>`,
    );
  const more =
    during.length > MAX_FAULTS ? `<li class="muted">… ${during.length - MAX_FAULTS} more</li>` : '';
  return `<ul class="why-fault-list">${items.join('')}${more}</ul>`;
}

/** Who led the group's partition when: a strip of stretches over its window, a fault lane under it, the same in words. */
function leadershipHtml(g: DiagnosisGroup): string {
  if (g.partition === undefined)
    return '<p class="why-leadership muted">Leadership: the partition of these ops is unknown.</p>';
  if (g.leadership.length === 0)
    return `<p class="why-leadership muted">Leadership of partition ${g.partition}: not reported (the target exports no leadership probe for it).</p>`;
  const stretches = g.leadership.slice(0, MAX_STRETCHES);
  const from = stretches[0]!.fromMs;
  const to = Math.max(from + 1, stretches[stretches.length - 1]!.toMs);
  const pct = (ms: number): string => `${(((ms - from) / (to - from)) * 100).toFixed(3)}%`;
  const width = (a: number, b: number): string => `${Math.max(0, ((b - a) / (to - from)) * 100).toFixed(3)}%`;
  const leaders = [...new Set(stretches.flatMap((s) => s.leaders))].sort();
  const segs = stretches.map((s) => {
    const words = stretchWords(s);
    const cls = s.leaders.length === 0 ? 'lead-none' : s.leaders.length > 1 ? 'lead-split' : 'lead-led';
    const hue = s.leaders.length === 1 ? leaderHue(leaders.indexOf(s.leaders[0]!)) : undefined;
    const colour = hue !== undefined ? `;background:hsl(${hue}, 55%, 82%)` : '';
    const label =
      s.leaders.length === 0
        ? 'no leader'
        : `${s.leaders.join(' + ')}${s.epoch !== undefined ? ` · e${s.epoch}` : ''}`;
    return `<span class="lead-seg ${cls}" style="left:${pct(s.fromMs)};width:max(3px,${width(s.fromMs, s.toMs)})${colour}" title="${h(words)}">${h(label)}</span>`;
  });
  const faults = g.faults
    .filter((f) => f.before !== true && f.fromMs <= to && (f.toMs ?? to) >= from)
    .slice(0, MAX_FAULTS)
    .map((f) => {
      const a = Math.max(from, f.fromMs);
      const b = Math.min(to, f.toMs ?? to);
      return `<span class="lead-fault" style="left:${pct(a)};width:${width(a, b)}" title="${h(faultText(f))}">${h(f.name)}</span>`;
    });
  const faultLane = faults.length > 0 ? `<div class="lead-strip lead-faults">${faults.join('')}</div>` : '';
  const more =
    g.leadership.length > MAX_STRETCHES
      ? ` (first ${MAX_STRETCHES} of ${g.leadership.length} stretches)`
      : '';
  return `<div class="why-leadership" data-partition="${g.partition}">
<div class="lead-head"><span>partition ${g.partition} leadership${h(more)}</span><span class="muted">${h(sec(from))} s → ${h(sec(to))} s</span></div>
<div class="lead-strip">${segs.join('')}</div>
${faultLane}
<p class="lead-words">${h(stretches.map(stretchWords).join(' → '))}</p>
</div>`;
}

function stretchWords(s: LeadershipStretch): string {
  return describeLeadership([s]);
}

function leaderHue(i: number): number {
  return [210, 130, 280, 40, 180, 330][i % 6]!;
}

function exampleHtml(
  g: DiagnosisGroup,
  example: WhyExample | undefined,
  anchors: ReadonlyMap<string, string>,
  runHasSpans: boolean,
): string {
  const parts: string[] = [];
  if (example?.anchor !== undefined) {
    const label = `op ${example.opId}${example.invocationId !== undefined ? ` · ${example.invocationId}` : ''}`;
    const note = example.hasSpans
      ? ''
      : runHasSpans
        ? ' <span class="muted">(no spans of this op were recorded: it has no waterfall)</span>'
        : ' <span class="muted">(the run has no spans: no waterfall)</span>';
    parts.push(
      `Example: <a class="why-example-link" href="#${h(example.anchor)}">${h(label)} — ${example.hasSpans ? 'its waterfall' : 'its entry'}</a>${note}`,
    );
  } else if (example?.invocationId !== undefined)
    parts.push(
      `Example: <code>${h(example.invocationId)}</code> <span class="muted">(not in the client history: no waterfall here)</span>`,
    );
  else parts.push('<span class="muted">No op of this group can be shown (no op id or invocation id).</span>');
  const others = g.invocationIds.filter((id) => id !== example?.invocationId);
  if (others.length > 0) {
    const shown = others.slice(0, MAX_IDS).map((id) => {
      const anchor = anchors.get(id);
      return anchor === undefined
        ? `<code>${h(id)}</code>`
        : `<a href="#${h(anchor)}"><code>${h(id)}</code></a>`;
    });
    const exampled = example?.opId !== undefined || example?.invocationId !== undefined ? 1 : 0;
    const rest = g.count - exampled - Math.min(others.length, MAX_IDS);
    parts.push(`also ${shown.join(' ')}${rest > 0 ? ` … and ${rest} more` : ''}`);
  }
  const traceId = example?.invocationId ?? g.invocationIds[0];
  const cmd =
    traceId !== undefined
      ? `<pre class="why-trace">npx limbo trace ${h(traceId)} --run &lt;run directory&gt;</pre>`
      : '';
  return `<p class="why-example">${parts.join(' · ')}</p>${cmd}`;
}
