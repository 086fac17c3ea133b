// report.html's Fault space and Code coverage panels on a real run's files: a short run with a
// leader kill, a pause and a link latency, made with --coverage (test/helpers/report-run.ts).
// The run's own report.html carries both panels filled in; the panels show what `limbo
// coverage` prints of the same files (per-file figures, the total, the unreached arms in its
// order, the fault kinds never met on a subject, the phases of each cell); without
// coverage.json the panel gives the command that measures it; run text is escaped.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { runCheckers, noClientLeftHanging } from '../../src/checkers/index.js';
import {
  faultSpaceFile,
  faultSpaceGrid,
  formatFaultSpace,
  readFaultSpace,
  type FaultSpace,
} from '../../src/coverage/fault-space.js';
import { formatCoverage, mergeCoverage, type CoverageMap } from '../../src/coverage/map.js';
import {
  codeCoverageOf,
  COVERAGE_PREFIX,
  coverageSection,
  faultSpaceSection,
  MAX_UNREACHED,
} from '../../src/report/html-coverage.js';
import { runFiles } from '../../src/run-data/files.js';
import type { VerdictFile } from '../../src/run-data/verdict.js';
import { buildVerdict, writeReport } from '../../src/report/write-report.js';
import { reportRun } from '../helpers/report-run.js';
import { sampleRun } from './sample-run.js';

let runDir = '';
let map: CoverageMap;
let space: FaultSpace;
let verdict: VerdictFile;

before(() => {
  runDir = reportRun().runDir;
  map = mergeCoverage([join(runDir, runFiles.coverage)]);
  space = readFaultSpace(join(runDir, faultSpaceFile));
  verdict = JSON.parse(readFileSync(join(runDir, runFiles.verdict), 'utf8')) as VerdictFile;
});

/** The panel `<section id="…">` of a page; fails when there is none. */
function section(html: string, id: string): string {
  const from = html.indexOf(`<section id="${id}"`);
  assert.ok(from >= 0, `no section #${id}`);
  return html.slice(from, html.indexOf('</section>', from) + '</section>'.length);
}

const unescape = (s: string): string =>
  s.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)));

test("the run's own report.html shows its fault space grid and its measured code coverage", () => {
  const html = readFileSync(join(runDir, runFiles.report), 'utf8');
  const faults = section(html, 'fault-space');
  assert.match(faults, /data-state="grid"/);
  assert.match(faults, /<td class="fs-cell fs-met" data-fault="kill"/);
  const code = section(html, 'code-coverage');
  assert.match(code, /data-state="measured"/, 'the report was written again once coverage.json was');
  assert.match(code, /<tr id="coverage-total">/);
  // After the fault windows, before the phases.
  assert.ok(html.indexOf('<table id="faults"') < html.indexOf('<section id="fault-space"'));
  assert.ok(html.indexOf('<section id="code-coverage"') < html.indexOf('<table id="phases"'));
});

test('Code coverage: the figures limbo coverage prints, file by file with bars, the total, and the unreached arms error paths first', () => {
  const panel = coverageSection(codeCoverageOf(map), verdict.replay);
  const text = formatCoverage(map, COVERAGE_PREFIX, 1, MAX_UNREACHED);
  // Per file and the total: the same counts as the text table.
  const printed = [...text.matchAll(/^(src\/services\/\S+|total)\s.*?(\d+)\/(\d+)\s.*?(\d+)\/(\d+)$/gm)].map(
    (m) => `${m[1]} ${m[2]}/${m[3]} ${m[4]}/${m[5]}`,
  );
  const rows = [
    ...panel.matchAll(/<tr (?:class="cov-file" data-file="([^"]+)"|id="coverage-total")>(.*?)<\/tr>/g),
  ].map((m) => {
    const counts = [...m[2]!.matchAll(/<span class="cov-count">(\d+\/\d+)<\/span>/g)].map((c) => c[1]);
    return `${m[1] ?? 'total'} ${counts.join(' ')}`;
  });
  assert.ok(rows.length > 10, `${rows.length} file rows`);
  assert.deepEqual(rows, printed);
  for (const file of ['ingress/router.ts', 'log/log-server.ts', 'processor/partition-replica.ts'])
    assert.match(panel, new RegExp(`data-file="src/services/${file}"`));
  // Each bar is as long as its percentage.
  for (const m of panel.matchAll(
    /<td class="num">([\d.]+)%<\/td><td class="cov-cell"><span class="cov-bar [a-z-]+"><span style="width:([\d.]+)%">/g,
  ))
    assert.equal(m[2], m[1]);
  // The unreached arms: the count the text gives, then the same arms in the same order.
  const [, total, errors] = /^(\d+) branch arm\(s\) no run took, (\d+) on error paths/m.exec(text) ?? [];
  assert.ok(Number(total) > 0 && Number(errors) > 0, text);
  assert.match(panel, new RegExp(`>${total} branch arm\\(s\\) never taken, ${errors} on error paths`));
  const listed = [...text.matchAll(/^ {2}(error | {6})(src\/services\/\S+:\d+) (\S+)\s/gm)].map(
    (m) => `${m[1]!.trim() || '-'} ${m[2]} ${m[3]}`,
  );
  const shown = [
    ...panel.matchAll(
      /<tr class="unreached( error-path)?" data-file="([^"]+)" data-line="(\d+)">.*?<td class="mono">[^<]*<\/td><td class="mono">([^<]+)<\/td>/g,
    ),
  ].map((m) => `${m[1] !== undefined ? 'error' : '-'} ${m[2]}:${m[3]} ${m[4]}`);
  assert.equal(shown.length, Math.min(Number(total), MAX_UNREACHED));
  assert.deepEqual(shown, listed);
  assert.equal(shown[0]!.split(' ')[0], 'error', 'error paths first');
});

test('Fault space: a row per subject, a column per fault kind, the phases of each met cell, the kinds never met on a subject', () => {
  const panel = faultSpaceSection(space);
  const grid = faultSpaceGrid([space]);
  const rows = new Map(
    [...panel.matchAll(/<tr class="fs-subject" data-subject="([^"]+)">(.*?)<\/tr>/g)].map((m) => [
      unescape(m[1]!),
      new Map(
        [
          ...m[2]!.matchAll(
            /<td class="fs-cell [a-z-]+" data-fault="([^"]+)" data-state="([^"]+)"[^>]*>(.*?)<\/td>/g,
          ),
        ].map((c) => [
          c[1]!,
          { state: c[2]!, phases: [...c[3]!.matchAll(/data-phase="([^"]+)"/g)].map((p) => p[1]) },
        ]),
      ),
    ]),
  );
  // The run struck the leader (kill), another processor (pause) and the leader's link to the log.
  assert.deepEqual([...rows.keys()], ['processor', 'processor (leader)', 'storage link processor->log']);
  assert.deepEqual([...rows.get('processor')!.keys()], ['latency', 'kill', 'pause']);
  // Every met cell lists the phases of fault-space.json's cells, in its order.
  for (const m of space.met)
    assert.deepEqual(
      rows.get(m.subject)?.get(m.fault),
      {
        state: 'met',
        phases: space.cells.filter((c) => c.fault === m.fault && c.subject === m.subject).map((c) => c.phase),
      },
      `${m.fault} × ${m.subject}`,
    );
  // The kinds never met on a subject are the ones limbo coverage prints as not met.
  const notMet = formatFaultSpace([space]);
  const printed = [
    ...notMet
      .slice(notMet.indexOf('not met:'), notMet.indexOf('request phases met'))
      .matchAll(/^ {2}(\S.*?)\s{2,}(\S.*)$/gm),
  ].flatMap((m) => m[2]!.split(', ').map((k) => `${k} × ${m[1]}`));
  const never = [...rows].flatMap(([subject, cells]) =>
    [...cells].filter(([, c]) => c.state === 'never').map(([kind]) => `${kind} × ${subject}`),
  );
  assert.deepEqual(never.sort(), printed.sort());
  assert.deepEqual(never.sort(), ['kill × processor', 'pause × processor (leader)']);
  assert.equal(grid.subjects.length, rows.size);
  // A link fault's column is blank on a process, a process fault's on a link.
  assert.equal(rows.get('processor')!.get('latency')!.state, 'n/a');
  assert.equal(rows.get('storage link processor->log')!.get('kill')!.state, 'n/a');
});

test('without coverage.json the panel says how to measure it; the fault space is worked out from the run', () => {
  const panel = coverageSection(undefined, verdict.replay);
  assert.match(panel, /data-state="absent"/);
  assert.match(panel, /without <code>--coverage<\/code>/);
  assert.equal(/<pre id="coverage-command">(.*)<\/pre>/.exec(panel)?.[1], `${verdict.replay} --coverage`);
  assert.match(verdict.replay, /^npx limbo run .*short-faults\.ts --target reference --seed 3$/);
  // A runner's reason replaces the default, escaped.
  assert.match(
    coverageSection(undefined, verdict.replay, 'no limbo process <ran>'),
    /no limbo process &#60;ran&#62;/,
  );
  // A run directory with neither file (the hand-made sample run): the hint, and a grid of its faults.
  const dir = mkdtempSync(join(tmpdir(), 'limbo-report-coverage-'));
  try {
    const run = sampleRun();
    writeReport(
      dir,
      run,
      buildVerdict(run, runCheckers([noClientLeftHanging()], run), {
        durationMs: 1,
        replay: 'npx limbo run chaos/leader-kill.ts --target reference --seed 1',
      }),
    );
    const html = readFileSync(join(dir, runFiles.report), 'utf8');
    assert.match(
      section(html, 'code-coverage'),
      /npx limbo run chaos\/leader-kill\.ts --target reference --seed 1 --coverage/,
    );
    const grid = section(html, 'fault-space');
    assert.match(grid, /data-subject="processor \(leader\)"/);
    assert.match(
      grid,
      /data-subject="peer link ingress-&#62;processor"><th[^>]*>[^<]*<\/th><td class="fs-cell fs-met" data-fault="latency"/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('run text in the panels is escaped', () => {
  const evil = '<img src=x onerror=alert(1)>';
  const panel = faultSpaceSection({
    ...space,
    met: space.met.map((m) => ({ ...m, subject: `${m.subject}${evil}` })),
    cells: space.cells.map((c) => ({ ...c, subject: `${c.subject}${evil}`, phase: `${c.phase}${evil}` })),
  });
  assert.doesNotMatch(panel, /<img/);
  assert.match(panel, /&#60;img src=x/);
  const code = codeCoverageOf(map);
  code.unreached[0] = { ...code.unreached[0]!, text: evil };
  assert.doesNotMatch(coverageSection(code, verdict.replay), /<img/);
});
