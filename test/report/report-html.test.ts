// Browser test of report.html: writes a run directory the way the runner does (verdict.json,
// spans.jsonl, report.html), opens the report from file:// in Debian's Chromium through
// playwright-core, and checks what a user would see — charts drawn, fault windows shaded and
// listed, the verdict table equal to verdict.json, the hung invocation's waterfall, the "Why
// it failed" panel of the run's diagnosis (its link scrolls to the example op's waterfall), the
// Fault space grid and the Code coverage panel's hint — with no console error and no request but
// the file itself. Then the report a real short run made with --coverage wrote: its fault space
// grid (met cells with their phases, kinds never met) and its code coverage (bars as long as
// their figures, the total, error paths first). Saves artifacts/report.png,
// artifacts/report-fault-space.png and artifacts/report-coverage.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import {
  faultsHitTraffic,
  leadershipChanged,
  noClientLeftHanging,
  pendingDrains,
  resendsObserved,
  runCheckers,
  type CheckResult,
} from '../../src/checkers/index.js';
import { diagnose } from '../../src/diagnose/index.js';
import { buildVerdict, writeReport, type VerdictFile } from '../../src/report/write-report.js';
import { faultSpaceFile, readFaultSpace } from '../../src/coverage/fault-space.js';
import { reportRun } from '../helpers/report-run.js';
import { HUNG_INVOCATION, SLOW_INVOCATION, sampleRun, sampleSpans } from './sample-run.js';

const CHROMIUM = process.env.LIMBO_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../../artifacts/', import.meta.url));
const NASTY_NAME = '</script><img src=x onerror="window.__pwned=1">&amp;';
/** uPlot's first series colour in report-client.ts (#1f77b4). */
const FIRST_LINE_RGB = [31, 119, 180];

interface ChartProbe {
  id: string;
  canvas: boolean;
  width: number;
  height: number;
  painted: number;
  firstLinePixels: number;
  dataUrlLength: number;
  bandLefts: number[];
  bandWidths: number[];
}

const probeCharts = `(() => {
  const [r0, g0, b0] = ${JSON.stringify(FIRST_LINE_RGB)};
  return [...document.querySelectorAll('.chart')].map((el) => {
    const c = el.querySelector('canvas');
    const bands = [...el.querySelectorAll('.fault-band')].map((b) => b.getBoundingClientRect());
    if (!c) return { id: el.id, canvas: false, width: 0, height: 0, painted: 0, firstLinePixels: 0, dataUrlLength: 0, bandLefts: [], bandWidths: [] };
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let painted = 0, firstLinePixels = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] === 0) continue;
      painted++;
      if (d[i + 3] > 100 && Math.abs(d[i] - r0) + Math.abs(d[i + 1] - g0) + Math.abs(d[i + 2] - b0) < 60) firstLinePixels++;
    }
    return { id: el.id, canvas: true, width: c.width, height: c.height, painted, firstLinePixels,
      dataUrlLength: c.toDataURL().length, bandLefts: bands.map((b) => b.left), bandWidths: bands.map((b) => b.width) };
  });
})()`;

/** The fresh --user-data-dir goes through launchPersistentContext's first argument (Playwright refuses it in args). */
const LAUNCH_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Polls an expression through the DevTools protocol: page.waitForFunction would eval() it in
 * the page, which the report's Content-Security-Policy (rightly) forbids.
 */
async function waitFor(page: Page, expression: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate<boolean>(expression))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${expression}`);
    await sleep(50);
  }
}

/**
 * A run directory as the runner leaves it (the run holds its spans, the checks' diagnosis is in
 * verdict.json); `probe` adds a check whose name and summary are markup.
 */
function writeSampleRunDir(dir: string, probe: boolean): VerdictFile {
  const run = { ...sampleRun(), spans: sampleSpans() };
  writeFileSync(
    join(dir, 'spans.jsonl'),
    sampleSpans()
      .map((s) => JSON.stringify(s))
      .join('\n') + '\n',
  );
  const checks: CheckResult[] = [
    ...runCheckers(
      [noClientLeftHanging(), pendingDrains(), leadershipChanged(), resendsObserved(), faultsHitTraffic()],
      run,
    ),
  ];
  if (probe)
    checks.push({
      name: NASTY_NAME,
      verdict: 'inconclusive',
      summary: 'a <b>name</b> & "quotes"',
      evidence: { details: {} },
    });
  const diagnosis = diagnose(run, checks);
  const verdict = buildVerdict(run, checks, {
    durationMs: 20_200,
    replay: `npx limbo run chaos/leader-kill.ts --target reference --seed ${run.seed}`,
    ...(diagnosis !== undefined ? { diagnosis } : {}),
  });
  writeReport(dir, run, verdict);
  return verdict;
}

test(
  'report.html in Chromium: charts drawn, fault windows, verdict table = verdict.json, waterfall, no network',
  {
    timeout: 180_000,
  },
  async (t) => {
    if (!existsSync(CHROMIUM)) {
      t.skip(`${CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium`);
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'limbo-report-'));
    const userDataDir = mkdtempSync(join(tmpdir(), 'limbo-chromium-'));
    const opened: { context?: BrowserContext } = {};
    // one hook, in this order: Chromium writes into its profile until it has exited
    t.after(async () => {
      await opened.context?.close();
      rmSync(dir, { recursive: true, force: true });
      rmSync(userDataDir, { recursive: true, force: true });
    });
    writeSampleRunDir(dir, true);
    // A real run with --coverage, made before Chromium starts (the run blocks this process).
    const real = reportRun();
    const realUrl = pathToFileURL(join(real.runDir, 'report.html')).href;
    const verdict = JSON.parse(readFileSync(join(dir, 'verdict.json'), 'utf8')) as VerdictFile;
    const reportUrl = pathToFileURL(join(dir, 'report.html')).href;

    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: LAUNCH_ARGS,
      viewport: { width: 1400, height: 1000 },
      timeout: 60_000,
    });
    opened.context = context;
    const problems: string[] = [];
    const requests: string[] = [];
    context.on('request', (r) => requests.push(r.url()));
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await page.goto(reportUrl, { waitUntil: 'load', timeout: 30_000 });
    await waitFor(page, 'document.body.dataset.chartsReady !== undefined');

    // charts: seven canvases, each with its first line drawn, each with every fault window shaded
    assert.equal(await page.evaluate<string | undefined>('document.body.dataset.chartsReady'), '7');
    const charts = await page.evaluate<ChartProbe[]>(probeCharts);
    assert.deepEqual(
      charts.map((c) => c.id),
      [
        'chart-pending',
        'chart-oldest-pending',
        'chart-resends',
        'chart-leadership',
        'chart-rpc-attempts',
        'chart-latency',
        'chart-workload-pending',
      ],
    );
    for (const c of charts) {
      assert.ok(c.canvas && c.width >= 320 && c.height >= 200, `${c.id}: canvas ${c.width}x${c.height}`);
      assert.ok(c.firstLinePixels > 100, `${c.id}: only ${c.firstLinePixels} pixels of its first line drawn`);
      assert.ok(c.dataUrlLength > 5000, `${c.id}: canvas data URL only ${c.dataUrlLength} chars`);
      assert.equal(c.bandWidths.length, verdict.faults, `${c.id}: fault bands`);
      assert.ok(
        c.bandWidths.every((w) => w > 5),
        `${c.id}: fault band widths ${c.bandWidths.join(', ')}`,
      );
      // bands in injection order (5 s, 9.5 s, 13 s) left to right
      assert.deepEqual(
        [...c.bandLefts].sort((a, b) => a - b),
        c.bandLefts,
      );
    }

    // fault windows listed
    const faultRows = page.locator('#faults tbody tr.fault-window');
    assert.equal(await faultRows.count(), verdict.faults);
    assert.deepEqual(
      await page.evaluate<string[]>(
        `[...document.querySelectorAll('#faults tbody tr.fault-window')].map((r) => r.dataset.fault)`,
      ),
      ['kill', 'latency', 'link-down'],
    );

    // the verdict table is verdict.json's checks, names and summaries as text (not markup)
    const rows = await page.evaluate<string[][]>(
      `[...document.querySelectorAll('#checks tbody tr.check')].map((tr) =>
      ['.check-name', '.check-verdict', '.check-summary'].map((c) => tr.querySelector(c).textContent))`,
    );
    assert.deepEqual(
      rows,
      verdict.checks.map((c) => [c.name, c.verdict, c.summary]),
    );
    assert.equal(await page.locator('#overall-verdict').textContent(), verdict.verdict);
    assert.equal(verdict.verdict, 'fail', 'the sample run leaves a client hanging');
    assert.equal(await page.locator('img').count(), 0, 'a check name became markup');
    assert.equal(await page.evaluate<unknown>('window.__pwned'), undefined);

    // why it failed: the panel above the verdict table, the top group's sentence, the leadership
    // strip with its gap, and the example op's link, which brings its waterfall into view
    const why = page.locator('#why');
    assert.equal(await why.isVisible(), true);
    const top = verdict.diagnosis?.groups[0];
    assert.ok(top, 'the sample run has a diagnosis');
    assert.equal(await page.locator('#why-1 .why-sentence').textContent(), top.sentence);
    assert.match(top.sentence, /^1 call left hanging, stopped at ingress-1 in "ingress Submit attempt"/);
    const whyBox = await why.boundingBox();
    const checksBox = await page.locator('#checks').boundingBox();
    assert.ok(whyBox !== null && checksBox !== null && whyBox.y < checksBox.y, 'the panel comes first');
    const gap = page.locator('#why-1 .lead-seg.lead-none');
    assert.equal(await gap.isVisible(), true);
    assert.equal(await gap.textContent(), 'no leader');
    assert.ok(((await gap.boundingBox())?.width ?? 0) >= 3, 'the gap is drawn');
    assert.equal(await page.locator('#why-1 .lead-seg.lead-led').count(), 2);
    assert.equal(await page.locator('#why-1 .lead-fault').textContent(), 'kill@processor-1');
    const link = page.locator('#why-1 a.why-example-link');
    const href = await link.getAttribute('href');
    assert.match(href ?? '', /^#inv-\d+$/);
    const target = page.locator(`section.invocation${href}`);
    assert.equal(await target.getAttribute('data-invocation-id'), HUNG_INVOCATION);
    const viewport = await page.evaluate<number>('window.innerHeight');
    const unseen = await target.boundingBox();
    assert.ok(unseen !== null && unseen.y > viewport, 'the waterfall starts out of view');
    await link.click();
    await waitFor(page, `location.hash === ${JSON.stringify(href)}`);
    await waitFor(
      page,
      `document.querySelector(${JSON.stringify(`section.invocation${href}`)}).getBoundingClientRect().top < 50`,
    );
    const shown = await target.locator('table.waterfall').boundingBox();
    assert.ok(
      shown !== null && shown.y >= 0 && shown.y < viewport,
      `the waterfall is in view at ${shown?.y}`,
    );
    assert.equal(await target.locator('tr.span-row').first().isVisible(), true);
    assert.equal(
      await page.evaluate<boolean>(`document.querySelector(${JSON.stringify(href)}).matches(':target')`),
      true,
    );
    await page.evaluate('window.scrollTo(0, 0)');

    // the fault space of the sample run (worked out from its faults: it has no fault-space.json)
    // and, without coverage.json, the command that measures its coverage
    assert.equal(await page.locator('#fault-space-grid').isVisible(), true);
    assert.deepEqual(
      await page.evaluate<string[]>(
        `[...document.querySelectorAll('#fault-space-grid tr.fs-subject')].map((r) => r.dataset.subject)`,
      ),
      ['peer link ingress->processor', 'processor (leader)'],
    );
    assert.equal(await page.locator('#code-coverage').getAttribute('data-state'), 'absent');
    assert.equal(await page.locator('#coverage-command').isVisible(), true);
    assert.equal(await page.locator('#coverage-command').textContent(), `${verdict.replay} --coverage`);

    // evidence is collapsed until opened
    const failing = page.locator('#checks tr.check[data-verdict="fail"]').first();
    const evidence = failing.locator('details.evidence');
    assert.equal(await evidence.locator('pre').first().isVisible(), false);
    await evidence.locator('summary').click();
    assert.equal(await evidence.locator('pre').first().isVisible(), true);
    assert.ok(
      (await evidence.textContent())?.includes(HUNG_INVOCATION),
      'the hanging check names the hung invocation',
    );

    // the hung invocation with its waterfall (five spans), and the slow one
    const hung = page.locator(`#invocations section.invocation[data-invocation-id="${HUNG_INVOCATION}"]`);
    assert.equal(await hung.getAttribute('data-reason'), 'hung');
    assert.equal(await hung.locator('tr.span-row').count(), 5);
    assert.equal(await hung.locator('tr.span-error').count(), 2);
    assert.ok((await hung.locator('.wf-fault').count()) > 0, 'the kill window overlaps the hung trace');
    const slow = page.locator(`#invocations section.invocation[data-invocation-id="${SLOW_INVOCATION}"]`);
    assert.equal(await slow.getAttribute('data-reason'), 'slowest');
    assert.equal(await slow.locator('tr.span-row').count(), 4);

    // seed, replay command, suite, target, phases
    assert.equal(await page.locator('#seed').textContent(), String(verdict.seed));
    assert.equal(await page.locator('#replay').textContent(), verdict.replay);
    assert.equal(await page.locator('#suite').textContent(), 'leader-kill');
    assert.equal(await page.locator('#target').textContent(), 'reference');
    assert.equal(await page.locator('#phases tbody tr').count(), 7);

    // zooming one chart zooms all, and the bands follow
    const before = charts[0]?.bandWidths[0] ?? 0;
    await page.locator('#chart-pending').scrollIntoViewIfNeeded();
    const box = await page.locator('#chart-pending .u-over').boundingBox();
    assert.ok(box !== null);
    await page.mouse.move(box.x + box.width * 0.2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await waitFor(
      page,
      `document.querySelector('#chart-workload-pending .fault-band').getBoundingClientRect().width > ${before * 1.5}`,
    );
    const zoomed = await page.evaluate<ChartProbe[]>(probeCharts);
    for (const c of zoomed)
      assert.ok(
        (c.bandWidths[0] ?? 0) > before * 1.5,
        `${c.id}: band ${c.bandWidths[0]} after zoom (was ${before})`,
      );
    await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
    await waitFor(
      page,
      `document.querySelector('#chart-workload-pending .fault-band').getBoundingClientRect().width < ${before * 1.2}`,
    );

    // artefacts: the whole page, and its top at README size with the evidence closed
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.mouse.move(0, 0);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });
    // the README's picture: the same run without the markup probe, at the top, evidence closed
    const clean = join(dir, 'clean');
    mkdirSync(clean);
    writeSampleRunDir(clean, false);
    const cleanUrl = pathToFileURL(join(clean, 'report.html')).href;
    await page.setViewportSize({ width: 1280, height: 1300 });
    await page.goto(cleanUrl, { waitUntil: 'load', timeout: 30_000 });
    await waitFor(page, `document.body.dataset.chartsReady === '7'`);
    await page.screenshot({ path: join(ARTIFACTS, 'report-top.png') });
    t.diagnostic(`screenshots: ${join(ARTIFACTS, 'report.png')}, ${join(ARTIFACTS, 'report-top.png')}`);

    // the real run's report: the fault space grid and the measured code coverage
    await page.setViewportSize({ width: 1400, height: 1000 });
    await page.goto(realUrl, { waitUntil: 'load', timeout: 30_000 });
    await waitFor(page, `document.body.dataset.chartsReady !== undefined`);
    const space = readFaultSpace(join(real.runDir, faultSpaceFile));
    const grid = page.locator('#fault-space-grid');
    await grid.scrollIntoViewIfNeeded();
    assert.equal(await grid.isVisible(), true);
    assert.deepEqual(
      await page.evaluate<string[]>(
        `[...document.querySelectorAll('#fault-space-grid tr.fs-subject')].map((r) => r.dataset.subject)`,
      ),
      ['processor', 'processor (leader)', 'storage link processor->log'],
    );
    const killed = grid.locator('tr[data-subject="processor (leader)"] td[data-fault="kill"]');
    assert.equal(await killed.getAttribute('data-state'), 'met');
    assert.deepEqual(
      await Promise.all((await killed.locator('li').all()).map((li) => li.getAttribute('data-phase'))),
      space.cells.filter((c) => c.fault === 'kill' && c.subject === 'processor (leader)').map((c) => c.phase),
    );
    assert.equal(await killed.locator('li').first().isVisible(), true);
    // the kinds this run never put on a subject: shown, hatched, in the cells they belong to
    const never = grid.locator('td.fs-never');
    assert.equal(await never.count(), 2);
    for (const cell of await never.all()) {
      assert.equal(await cell.isVisible(), true);
      assert.equal(await cell.textContent(), 'never');
      assert.match(
        await cell.evaluate(
          (el) =>
            (
              globalThis as unknown as { getComputedStyle(e: unknown): { backgroundImage: string } }
            ).getComputedStyle(el).backgroundImage,
        ),
        /repeating-linear-gradient/,
      );
    }
    assert.equal(
      await grid.locator('tr[data-subject="processor"] td[data-fault="kill"]').getAttribute('data-state'),
      'never',
    );
    // code coverage: a row a file of src/services/, each bar as long as its figure, the total,
    // and the unreached arms with an error path first
    const files = page.locator('#coverage-files tbody tr.cov-file');
    assert.ok((await files.count()) > 10, `${await files.count()} files`);
    assert.equal(
      await page
        .locator('#coverage-files tr.cov-file[data-file="src/services/ingress/router.ts"]')
        .isVisible(),
      true,
    );
    const bars = await page.evaluate<{ shown: number; drawn: number }[]>(
      `[...document.querySelectorAll('#coverage-files td.cov-cell')].filter((td) => td.querySelector('.cov-bar')).map((td) => {
        const bar = td.querySelector('.cov-bar'), fill = bar.firstElementChild;
        return { shown: parseFloat(td.previousElementSibling.textContent), drawn: (100 * fill.getBoundingClientRect().width) / bar.clientWidth };
      })`,
    );
    assert.ok(bars.length > 20, `${bars.length} bars`);
    for (const b of bars) assert.ok(Math.abs(b.shown - b.drawn) < 2, `bar ${b.drawn}% for ${b.shown}%`);
    assert.ok(
      bars.some((b) => b.drawn > 50),
      'some bar is drawn',
    );
    assert.match(
      (await page.locator('#coverage-total').textContent()) ?? '',
      /^total\d+\.\d%\d+\/\d+\d+\.\d%\d+\/\d+$/,
    );
    const firstArm = page.locator('#coverage-unreached tr.unreached').first();
    assert.equal(await firstArm.getAttribute('class'), 'unreached error-path');
    assert.equal(await firstArm.locator('.badge').textContent(), 'error');
    assert.equal(await firstArm.isVisible(), true);
    await page.locator('#fault-space').screenshot({ path: join(ARTIFACTS, 'report-fault-space.png') });
    await page.locator('#code-coverage').screenshot({ path: join(ARTIFACTS, 'report-coverage.png') });
    t.diagnostic(
      `screenshots: ${join(ARTIFACTS, 'report-fault-space.png')}, ${join(ARTIFACTS, 'report-coverage.png')}`,
    );

    assert.deepEqual(problems, []);
    assert.deepEqual(
      requests.filter((u) => u !== reportUrl && u !== cleanUrl && u !== realUrl),
      [],
      'the report fetched something',
    );
    assert.ok(requests.includes(reportUrl));
  },
);
