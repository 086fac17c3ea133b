// Detection power: switch on each bug switch (src/services/bugs.ts; what each should show:
// catalogue.ts), run the suites that claim it (`catches`), and see whether one goes red with
// evidence; then run the same suites on plain `reference`, where every red verdict is a false
// alarm.
//
//   switch ─▶ suites claiming it ─▶ run on reference+bug:<switch> until one fails
//        │    (none claims it ─▶ a bounded limbo explore: `exploreRuns` random schedules)
//        └─▶ caught by (suite, check), the evidence line, seconds to the first failing verdict
//   union of those suites ─▶ run on reference ─▶ false alarms
//   ─▶ DetectionReport ─▶ detection.json + detection.html
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckResult } from '../checkers/checker.js';
import type { VerdictFile } from '../run-data/verdict.js';
import { explore } from '../explore/explore.js';
import { exploreFaultKinds } from '../explore/plan.js';
import type { LoadedSuite } from '../runner/load-suites.js';
import { writeSeedFile } from '../runner/seed-file.js';
import { runSuiteOutcome, type Progress, type RunSuiteOptions } from '../runner/run-suite.js';
import { skipReasonFor } from '../runner/suite.js';
import { detectionHtml } from '../report/detection-html.js';
import { createCleanup } from '../runtime/cleanup.js';
import type { RuntimeChoice } from '../runtime/service-runtime.js';
import type { BugName } from '../services/bugs.js';
import { BUG_TARGET_PREFIX, createTarget } from '../targets/registry.js';
import { bugDetection } from './catalogue.js';

export interface DetectOptions {
  suites: readonly LoadedSuite[];
  switches: readonly BugName[];
  seed: number;
  outRoot: string;
  runtime: RuntimeChoice;
  /** The run Prometheus, as `limbo run` chooses it (PromQL assertions). */
  runOptions?: Pick<RunSuiteOptions, 'prometheus' | 'noPrometheusReason' | 'coverage'>;
  /** Also run the suites on plain reference (false alarms); default true. */
  reference?: boolean;
  /**
   * Random schedules `limbo explore` tries on a switch no suite claims (default 3; 0: none,
   * the switch is reported missed). Failing schedules are saved under `<outRoot>/detect-seeds`.
   */
  exploreRuns?: number;
  /**
   * Seeds each claiming suite gets before a switch counts as missed (default 3: seed, seed+1,
   * seed+2, in rounds over the suites; the first failing run catches it). A switch shows only
   * when a fault meets its moment, so one seed can miss it by chance.
   */
  seedsPerSuite?: number;
  onLine?: (line: string) => void;
  onLog?: (line: string) => void;
  onProgress?: (p: Progress) => void;
  onRunDone?: () => void;
}

export interface SuiteVerdict {
  suite: string;
  target: string;
  verdict: string;
  seconds: number;
  failing: string[];
  runDir?: string;
}

export interface SwitchResult {
  switch: BugName;
  mustCatch: boolean;
  description: string;
  source: string;
  claimedBy: string[];
  caught: boolean;
  caughtBy?: { suite: string; check: string };
  evidence?: string;
  /** Seconds of runs on this switch until the first failing verdict. */
  secondsToFail?: number;
  runs: SuiteVerdict[];
}

export interface DetectionReport {
  seed: number;
  startedAt: string;
  switches: SwitchResult[];
  score: { caught: number; total: number };
  missedMustCatch: BugName[];
  reference: SuiteVerdict[];
  falseAlarms: SuiteVerdict[];
}

export async function runDetection(o: DetectOptions): Promise<DetectionReport> {
  const line = o.onLine ?? (() => {});
  const startedAt = new Date().toISOString();
  const results: SwitchResult[] = [];
  const used = new Set<string>();
  for (const [i, sw] of o.switches.entries()) {
    const info = bugDetection(sw);
    const target = `${BUG_TARGET_PREFIX}${sw}`;
    const claiming = o.suites.filter(
      (s) => s.suite.catches.includes(sw) && skipReasonFor(s.suite, target) === undefined,
    );
    line(
      `[${i + 1}/${o.switches.length}] ${sw}: ${claiming.map((s) => s.suite.name).join(', ') || 'no suite claims it'}`,
    );
    const res: SwitchResult = {
      switch: sw,
      mustCatch: info.mustCatch,
      description: info.description,
      source: info.source,
      claimedBy: claiming.map((s) => s.suite.name),
      caught: false,
      runs: [],
    };
    let seconds = 0;
    if (claiming.length === 0 && (o.exploreRuns ?? 3) > 0) {
      await exploreSwitch(res, target, o, line);
      results.push(res);
      continue;
    }
    const rounds = Math.max(1, o.seedsPerSuite ?? 3);
    for (let round = 0; round < rounds && !res.caught; round++) {
      for (const s of claiming) {
        used.add(s.file);
        // A suite pinned to its own seed has only that one.
        if (round > 0 && s.suite.seed !== undefined) continue;
        const seed = s.suite.seed ?? (o.seed + round) >>> 0;
        const v = await runOne(s, target, o, seed);
        res.runs.push(v.summary);
        seconds += v.summary.seconds;
        line(
          `    ${s.suite.name} (seed ${seed}): ${v.summary.verdict}${v.summary.failing.length > 0 ? ` (${v.summary.failing.join(', ')})` : ''}`,
        );
        if (v.summary.verdict === 'fail') {
          const first = v.failed[0];
          res.caught = true;
          res.caughtBy = {
            suite: seed === o.seed ? s.suite.name : `${s.suite.name} (seed ${seed})`,
            check: first?.name ?? 'run error',
          };
          res.evidence = first !== undefined ? evidenceLine(first) : v.summary.failing.join('; ');
          res.secondsToFail = Math.round(seconds * 10) / 10;
          break;
        }
      }
    }
    results.push(res);
  }
  const reference: SuiteVerdict[] = [];
  if (o.reference !== false) {
    const suites = o.suites.filter((s) => used.has(s.file));
    for (const [i, s] of suites.entries()) {
      line(`[reference ${i + 1}/${suites.length}] ${s.suite.name}`);
      const v = await runOne(s, 'reference', o);
      reference.push(v.summary);
      line(
        `    ${s.suite.name}: ${v.summary.verdict}${v.summary.failing.length > 0 ? ` (${v.summary.failing.join(', ')})` : ''}`,
      );
    }
  }
  const caught = results.filter((r) => r.caught).length;
  return {
    seed: o.seed,
    startedAt,
    switches: results,
    score: { caught, total: results.length },
    missedMustCatch: results.filter((r) => r.mustCatch && !r.caught).map((r) => r.switch),
    reference,
    falseAlarms: reference.filter((r) => r.verdict === 'fail'),
  };
}

/**
 * A switch no suite claims: a bounded explore on its target (the explore's own topology,
 * workload and checks; no shrinking). The first failing schedule catches it.
 */
async function exploreSwitch(
  res: SwitchResult,
  target: string,
  o: DetectOptions,
  line: (l: string) => void,
): Promise<void> {
  const runs = o.exploreRuns ?? 3;
  line(`    no suite claims it: limbo explore, ${runs} random schedule(s)`);
  let seconds = 0;
  const found = await explore({
    targetName: target,
    seed: o.seed,
    runs,
    budgetMs: runs * 120_000,
    maxFaults: 3,
    kinds: exploreFaultKinds,
    chaosMs: 10_000,
    convergeMs: 8000,
    shrinkRuns: 0,
    confirmRuns: 0,
    write: (l) => line(`    ${l.trimStart()}`),
    save: (seed) => writeSeedFile(join(o.outRoot, 'detect-seeds'), seed),
    runOne: async (suite, runSeed) => {
      const cleanup = createCleanup();
      const uninstall = cleanup.installSignalHandlers(() => {});
      try {
        const r = await runSuiteOutcome(suite, {
          target: createTarget(target, o.runtime),
          seed: runSeed,
          outRoot: o.outRoot,
          replay: `npx limbo explore --target ${target} --seed ${o.seed} --runs ${runs}`,
          cleanup,
          ...o.runOptions,
          ...(o.onLog !== undefined ? { onLog: o.onLog } : {}),
          ...(o.onProgress !== undefined ? { onProgress: o.onProgress } : {}),
        });
        o.onRunDone?.();
        const summary = summarize(r.verdict, r.runDir);
        res.runs.push(summary);
        seconds += summary.seconds;
        const first = r.verdict.checks.find((c) => c.verdict === 'fail' && c.skipped === undefined);
        if (!res.caught && first !== undefined) {
          res.caught = true;
          res.caughtBy = { suite: `explore, schedule seed ${runSeed}`, check: first.name };
          res.evidence = evidenceLine(first);
          res.secondsToFail = Math.round(seconds * 10) / 10;
        }
        return r;
      } finally {
        uninstall();
        await cleanup.runAll();
      }
    },
  });
  if (!res.caught) line(`    explore: ${found.runs.length} schedule(s), none failed`);
}

async function runOne(
  s: LoadedSuite,
  targetName: string,
  o: DetectOptions,
  seed: number = s.suite.seed ?? o.seed,
): Promise<{ summary: SuiteVerdict; failed: CheckResult[] }> {
  const cleanup = createCleanup();
  const uninstall = cleanup.installSignalHandlers(() => {});
  const replay = `npx limbo run ${s.file} --target ${targetName} --seed ${seed}`;
  try {
    const res = await runSuiteOutcome(s.suite, {
      target: createTarget(targetName, o.runtime),
      seed,
      outRoot: o.outRoot,
      replay,
      cleanup,
      ...o.runOptions,
      ...(o.onLog !== undefined ? { onLog: o.onLog } : {}),
      ...(o.onProgress !== undefined ? { onProgress: o.onProgress } : {}),
    });
    o.onRunDone?.();
    return {
      summary: summarize(res.verdict, res.runDir),
      failed: res.verdict.checks.filter((c) => c.verdict === 'fail' && c.skipped === undefined),
    };
  } catch (err) {
    o.onRunDone?.();
    const message = err instanceof Error ? err.message : String(err);
    return {
      summary: {
        suite: s.suite.name,
        target: targetName,
        verdict: 'error',
        seconds: 0,
        failing: [`run failed: ${message}`],
      },
      failed: [],
    };
  } finally {
    uninstall();
    await cleanup.runAll();
  }
}

function summarize(v: VerdictFile, runDir: string): SuiteVerdict {
  return {
    suite: v.suite,
    target: v.target,
    verdict: v.verdict,
    seconds: Math.round(v.durationMs / 100) / 10,
    failing: [
      ...v.checks.filter((c) => c.verdict === 'fail' && c.skipped === undefined).map((c) => c.name),
      ...v.runErrors.map((e) => `run error: ${e}`),
    ],
    runDir,
  };
}

/** One line naming the effect: the check's summary and, when it has them, an invocation id. */
export function evidenceLine(c: CheckResult): string {
  const ids = c.evidence.invocationIds ?? [];
  const summary = c.summary.length > 240 ? `${c.summary.slice(0, 237)}…` : c.summary;
  return ids.length > 0 && !summary.includes(ids[0]!) ? `${summary} [${ids[0]}]` : summary;
}

export function detectionTable(r: DetectionReport): string {
  const rows = r.switches.map((s) => [
    s.switch + (s.mustCatch ? '' : ' (optional)'),
    s.caughtBy !== undefined
      ? `${s.caughtBy.suite} / ${s.caughtBy.check}`
      : s.claimedBy.length === 0
        ? 'MISSED (no suite claims it)'
        : 'MISSED',
    s.secondsToFail !== undefined ? s.secondsToFail.toFixed(1) : '-',
    s.evidence ?? '',
  ]);
  const head = ['switch', 'caught by (suite / check)', 'seconds', 'evidence'];
  const w = [0, 1, 2].map((i) => Math.max(head[i]!.length, ...rows.map((row) => row[i]!.length)) + 2);
  const fmt = (row: string[]): string => row.map((c, i) => (i < 3 ? c.padEnd(w[i]!) : c)).join('') + '\n';
  let out = fmt(head);
  for (const row of rows) out += fmt(row);
  out += `score ${r.score.caught}/${r.score.total}`;
  if (r.reference.length > 0)
    out += `; reference: ${r.reference.length - r.falseAlarms.length}/${r.reference.length} suites pass, ${r.falseAlarms.length} false alarm(s)`;
  return out + '\n';
}

export function writeDetection(r: DetectionReport, dir: string): { json: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, 'detection.json');
  const html = join(dir, 'detection.html');
  writeFileSync(json, JSON.stringify(r, null, 2) + '\n');
  writeFileSync(html, detectionHtml(r));
  return { json, html };
}
