// Two panels of report.html about what the run reached. "Fault space" (every run,
// fault-space.json): a grid of fault kind × what it struck, each cell the request phases the
// fault met, a kind this run used elsewhere but never on a subject marked as a situation it did
// not create. "Code coverage" (coverage.json, written by a run made with --coverage): the lines
// and branches of src/services/ per file with bars, the total, and the branch arms no op took,
// error paths first; without the file the panel says how to get it. The figures come from
// coverage/ — the same functions `limbo coverage` prints with — so the two never disagree; this
// file only lays them out. Server-rendered and escaped, like the Why panel: no JavaScript needed.
import { faultSpaceGrid, phaseKey, type FaultSpace, type FaultSpaceGrid } from '../coverage/fault-space.js';
import {
  coverageFigures,
  unreachedBranches,
  type CoverageMap,
  type FileFigures,
  type UnreachedBranch,
} from '../coverage/map.js';
import { escapeHtml as h } from './html-escape.js';

/** The files the code panel shows, as `limbo coverage` does by default. */
export const COVERAGE_PREFIX = 'src/services/';
/** Unreached branch arms listed, as many as `limbo coverage` prints by default (the rest are counted). */
export const MAX_UNREACHED = 40;
/** Phases listed in one grid cell. */
const MAX_CELL_PHASES = 6;

/** A run's code coverage as the panel shows it: `limbo coverage`'s figures for one run. */
export interface CodeCoverage {
  prefix: string;
  files: FileFigures[];
  total: Omit<FileFigures, 'file'>;
  /** Every arm under `prefix` the run never took, error paths first. */
  unreached: UnreachedBranch[];
}

/** The panel's figures from a coverage map (a run's coverage.json, merged by coverage/map.ts). */
export function codeCoverageOf(map: CoverageMap, prefix = COVERAGE_PREFIX): CodeCoverage {
  return { prefix, ...coverageFigures(map, prefix), unreached: unreachedBranches(map, prefix) };
}

const percent = (covered: number, total: number): number => (total === 0 ? 0 : (100 * covered) / total);

/** A figure as the table shows it: the percentage, a bar of it, and the counts. */
function figureCells(f: { covered: number; total: number }): string {
  if (f.total === 0)
    return '<td class="num muted">–</td><td class="cov-cell muted"><span class="cov-count">0/0</span></td>';
  const p = percent(f.covered, f.total);
  const level = p >= 80 ? 'cov-high' : p >= 50 ? 'cov-mid' : 'cov-low';
  return (
    `<td class="num">${p.toFixed(1)}%</td>` +
    `<td class="cov-cell"><span class="cov-bar ${level}"><span style="width:${p.toFixed(1)}%"></span></span>` +
    `<span class="cov-count">${f.covered}/${f.total}</span></td>`
  );
}

/**
 * The code coverage panel: the run's figures, or, when it has none, why and the command that
 * measures them (`missing`, plain text: the reason the runner gave, e.g. a target of no limbo process).
 */
export function coverageSection(
  coverage: CodeCoverage | undefined,
  replayCommand: string,
  missing?: string,
): string {
  if (coverage === undefined) {
    const why =
      missing !== undefined
        ? h(missing)
        : 'This run was made without <code>--coverage</code>, so its directory holds no <code>coverage.json</code>.';
    const command = /^(npx )?limbo run /.test(replayCommand) ? `${replayCommand} --coverage` : '';
    return `<section id="code-coverage" class="coverage" data-state="absent">
<h2>Code coverage</h2>
<p>${why} Run it again with <code>--coverage</code> to see which lines and branches of <code>${h(COVERAGE_PREFIX)}</code> it reached and the branch arms it never took, error paths first. Only limbo's own processes are measured (the reference targets, on the local runtime).</p>
${command !== '' ? `<pre id="coverage-command">${h(command)}</pre>` : ''}
</section>`;
  }
  const { prefix, files, total, unreached } = coverage;
  if (files.length === 0)
    return `<section id="code-coverage" class="coverage" data-state="empty">
<h2>Code coverage</h2>
<p class="muted">The run's <code>coverage.json</code> holds no file under <code>${h(prefix)}</code>.</p>
</section>`;
  const rows = files.map(
    (f) =>
      `<tr class="cov-file" data-file="${h(f.file)}"><td class="mono" title="${h(f.file)}">${h(f.file.slice(prefix.length))}</td>` +
      `${figureCells(f.lines)}${figureCells(f.branches)}</tr>`,
  );
  const errors = unreached.filter((u) => u.errorPath).length;
  const arms = unreached
    .slice(0, MAX_UNREACHED)
    .map(
      (u) =>
        `<tr class="unreached${u.errorPath ? ' error-path' : ''}" data-file="${h(u.file)}" data-line="${u.line}">` +
        `<td>${u.errorPath ? '<span class="badge error-path">error</span>' : ''}</td>` +
        `<td class="mono">${h(u.file.slice(prefix.length))}:${u.line}</td>` +
        `<td class="mono">${h(u.kind)}[${u.arm}]</td><td><code>${h(u.text)}</code></td></tr>`,
    );
  const more =
    unreached.length > MAX_UNREACHED
      ? `<p class="muted" id="coverage-unreached-more">… ${unreached.length - MAX_UNREACHED} more: <code>npx limbo coverage &lt;this run directory&gt; --unreached ${unreached.length}</code> lists them all.</p>`
      : '';
  const armsTable =
    unreached.length === 0
      ? '<p>The run took every branch arm.</p>'
      : `<table id="coverage-unreached" class="coverage-unreached"><thead><tr><th></th><th>where</th><th>arm</th><th>source line</th></tr></thead><tbody>${arms.join('')}</tbody></table>${more}`;
  return `<section id="code-coverage" class="coverage" data-state="measured">
<h2>Code coverage</h2>
<p class="muted">Lines and branches of <code>${h(prefix)}</code> this run's processes reached (its <code>coverage.json</code>; <code>npx limbo coverage &lt;runs…&gt;</code> merges runs). A branch arm never taken is code no fault and no request of this run made run.</p>
<table id="coverage-files" class="coverage-files"><thead><tr><th>file</th><th colspan="2">lines</th><th colspan="2">branches</th></tr></thead>
<tbody>${rows.join('\n')}</tbody>
<tfoot><tr id="coverage-total"><th>total</th>${figureCells(total.lines)}${figureCells(total.branches)}</tr></tfoot></table>
<h3 id="coverage-unreached-head">${unreached.length} branch arm(s) never taken, ${errors} on error paths (a catch, a retry, a deadline, a step-down, a give-up…), those first</h3>
${armsTable}
</section>`;
}

/** A grid's columns: the kinds put on links, then those put on processes, each once. */
function gridKinds(grid: FaultSpaceGrid): { kind: string; link: boolean }[] {
  const link = new Set(grid.linkKinds);
  const process = new Set(grid.processKinds);
  // Kinds whose every window met no op are columns too, beside the kinds of their subjects.
  for (const s of grid.subjects) for (const k of s.unmet.keys()) (s.link ? link : process).add(k);
  const out = [...link].sort().map((kind) => ({ kind, link: true }));
  for (const kind of [...process].sort()) if (!link.has(kind)) out.push({ kind, link: false });
  return out;
}

/** One cell of the grid: the phases met, a window that met no op, never met here, or not applicable. */
function gridCell(grid: FaultSpaceGrid, s: FaultSpaceGrid['subjects'][number], kind: string): string {
  const windows = s.met.get(kind);
  const idle = s.unmet.get(kind);
  const attrs = `data-fault="${h(kind)}"`;
  const idleNote = idle !== undefined ? `<div class="fs-idle">${idle} window(s) met no op</div>` : '';
  if (windows !== undefined) {
    const cells = grid.phases.get(phaseKey(kind, s.subject)) ?? [];
    const phases = cells
      .slice(0, MAX_CELL_PHASES)
      .map((c) => `<li data-phase="${h(c.phase)}">${h(c.phase)} <span class="muted">(${c.ops})</span></li>`);
    const more =
      cells.length > MAX_CELL_PHASES ? `<li class="muted">… ${cells.length - MAX_CELL_PHASES} more</li>` : '';
    return `<td class="fs-cell fs-met" ${attrs} data-state="met" title="${h(`${kind} × ${s.subject}: ${windows} window(s) met traffic; ops in flight at the inject, by phase`)}"><div class="fs-windows">${windows} window(s)</div><ul class="fs-phases">${phases.join('')}${more}</ul>${idleNote}</td>`;
  }
  if (idle !== undefined) return `<td class="fs-cell fs-unmet" ${attrs} data-state="no-op">${idleNote}</td>`;
  if (s.missing.includes(kind))
    return `<td class="fs-cell fs-never" ${attrs} data-state="never" title="${h(`${kind} was used on another subject, never met on ${s.subject}: a situation this run did not create`)}">never</td>`;
  return `<td class="fs-cell fs-na" ${attrs} data-state="n/a"></td>`;
}

/** The fault space panel: the grid of fault kind × subject, each cell the request phases met. */
export function faultSpaceSection(space: FaultSpace | undefined): string {
  const head = `<h2>Fault space</h2>
<p class="muted">What situations this run's faults created: each fault kind × what it struck (a link by its kind and its ends' roles, a process by its role, marked when chosen as a partition's leader), with the request phases of the ops in flight at the inject (the deepest span open in their trace, or the op kind awaiting its answer) and how many ops were in each. From <code>fault-space.json</code>; <code>npx limbo coverage &lt;runs…&gt;</code> merges runs.</p>`;
  if (space === undefined)
    return `<section id="fault-space" class="fault-space" data-state="absent">${head}<p>This run directory holds no <code>fault-space.json</code>.</p></section>`;
  const grid = faultSpaceGrid([space]);
  if (grid.subjects.length === 0)
    return `<section id="fault-space" class="fault-space" data-state="empty">${head}<p>No fault was injected, so the run created no fault situation.</p></section>`;
  const kinds = gridKinds(grid);
  const links = kinds.filter((k) => k.link).length;
  const groups =
    (links > 0 ? `<th colspan="${links}" class="fs-group">link faults</th>` : '') +
    (kinds.length > links
      ? `<th colspan="${kinds.length - links}" class="fs-group">process faults</th>`
      : '');
  const rows = grid.subjects.map(
    (s) =>
      `<tr class="fs-subject" data-subject="${h(s.subject)}"><th class="fs-subject-name">${h(s.subject)}</th>${kinds
        .map((k) => gridCell(grid, s, k.kind))
        .join('')}</tr>`,
  );
  const never = grid.subjects.reduce((n, s) => n + s.missing.length, 0);
  return `<section id="fault-space" class="fault-space" data-state="grid">${head}
<p id="fault-space-summary">${grid.cells.length} cell(s) met (fault × what it struck × request phase) on ${grid.subjects.length} subject(s); ${never} never met: a fault kind this run used elsewhere, never on that subject.</p>
<div class="fs-scroll"><table id="fault-space-grid" class="fault-space-grid">
<thead><tr><th rowspan="2">what it struck</th>${groups}</tr>
<tr>${kinds.map((k) => `<th class="fs-kind" data-fault="${h(k.kind)}">${h(k.kind)}</th>`).join('')}</tr></thead>
<tbody>${rows.join('\n')}</tbody></table></div>
<p class="fs-legend muted"><span class="fs-key fs-met"></span> met: the phases its ops were in (ops) · <span class="fs-key fs-unmet"></span> put on it, met no op · <span class="fs-key fs-never"></span> never: a kind this run met elsewhere that applies here, a situation it did not create · blank: does not apply (a link fault on a process, a fault of another role)</p>
</section>`;
}
