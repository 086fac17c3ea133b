// A soak: every suite for N seeds through the runner's own runSuite, with a leak check
// after each run, summed into one table per suite.
//
//   for seed in seeds: for suite in suites:
//     snapshot ─▶ runSuites([suite]) (as `limbo run`: skip, own cleanup, Ctrl-C, failed run)
//       ─▶ settle (bounded: wait for what is still closing) ─▶ snapshot ─▶ leaks
//       ─▶ verdict → hung / lost / duplicated / false alarm
//
// Counted per run: hung = ops noClientLeftHanging found hanging; lost and duplicated =
// counter effects exactlyOnce found lost or applied twice; a false alarm = a run that did
// not pass though its suite documents a pass on the target and no client saw a problem
// (no hung op, no lost or duplicated effect); errors = the run itself failed. Every run
// gets a private TMPDIR so temp directories are attributable.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import type { VerdictFile } from '../run-data/verdict.js';
import type { Target } from '../targets/target.js';
import type { LoadedSuite } from '../runner/load-suites.js';
import type { Progress, RunSuiteOptions } from '../runner/run-suite.js';
import { documentedVerdict, runSuites, suiteSkipReason } from '../runner/run-suites.js';
import type { Suite } from '../runner/suite.js';
import { leaksBetween, snapshot, type Leak, type LeakProbe, type Snapshot } from './soak-leaks.js';

export interface SoakOptions {
  suites: readonly LoadedSuite[];
  target: Target;
  /** The target's name as given (`reference`), for documented verdicts and replay commands. */
  targetName: string;
  seeds: readonly number[];
  outRoot: string;
  toxiproxyUrl?: string;
  /** Each run's Prometheus, as `limbo run --prometheus` chooses it (for PromQL assertions). */
  runOptions?: Pick<RunSuiteOptions, 'prometheus' | 'noPrometheusReason' | 'coverage'>;
  /** The ids of this runner's containers, when the runtime is docker. */
  listContainers?: () => Promise<string[]>;
  /** Bound on waiting, after a run, for its processes, ports and temp dirs to go (default 5 s). */
  settleMs?: number;
  /** Extra runner fds tolerated after a run (default 8). */
  fdSlack?: number;
  /** Remove what a run leaked (processes killed, temp entries deleted) once counted (default true). */
  reclaim?: boolean;
  /** Extra `limbo run` flags for the replay commands (e.g. ` --runtime docker`). */
  replayFlags?: string;
  onLine?: (line: string) => void;
  /** A new progress sink per run (its `done` is called when the run ends). */
  progress?: (run: { index: number; total: number; seed: number }) => ProgressSink;
  /** Ctrl-C / SIGTERM during a run: its cleanup runs, then the process exits (as `limbo run`). */
  onSignal?: (suite: Suite, signal: NodeJS.Signals) => void;
}

export interface ProgressSink {
  onLog: (line: string) => void;
  onProgress: (p: Progress) => void;
  done: () => void;
}

export interface SoakRow {
  suite: string;
  runs: number;
  hung: number;
  lost: number;
  duplicated: number;
  leaks: number;
  falseAlarms: number;
  errors: number;
  seconds: number;
}

export interface SoakRun {
  suite: string;
  seed: number;
  verdict: VerdictFile['verdict'] | 'error';
  hung: number;
  lost: number;
  duplicated: number;
  falseAlarm: boolean;
  leaks: Leak[];
  /** Wall time of the run, cleanup and leak check. */
  seconds: number;
  error?: string;
  replay: string;
  runDir?: string;
}

export interface SoakResult {
  rows: SoakRow[];
  total: SoakRow;
  runs: SoakRun[];
  /** Leaks measured once more at the end against the state before the first run. */
  overallLeaks: Leak[];
  /** Suites not run on this target (skipOn, onlyOn, or faults a declared target cannot serve). */
  skipped: { suite: string; reason: string }[];
  ok: boolean;
}

/** The seeds of a soak: `count` of them from `base` (base, base+1, … mod 2^32). */
export function soakSeeds(base: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => (base + i) >>> 0);
}

/** Node's global HTTP agent closes a keep-alive socket idle this long (its `timeout`), plus a margin. */
const IDLE_SOCKET_CLOSE_MS = 6000;

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const line = o.onLine ?? (() => {});
  const settleMs = o.settleMs ?? 5000;
  const fdSlack = o.fdSlack ?? 8;
  const tmpDir = mkdtempSync(join(tmpdir(), 'limbo-soak-'));
  const restoreTmp = setTmp(tmpDir);
  const probe: LeakProbe = {
    tmpDir,
    markers: [tmpDir, resolve(o.outRoot)],
    ...(o.toxiproxyUrl !== undefined ? { toxiproxyUrl: o.toxiproxyUrl } : {}),
    ...(o.listContainers ? { listContainers: o.listContainers } : {}),
    fdSlack,
  };
  const runs: SoakRun[] = [];
  // Skipped as `limbo run` skips them: by the suite (skipOn, onlyOn) or by a declared target
  // that lacks a service, role or link the schedule names. Never run, so never a false alarm.
  const skipped: SoakResult['skipped'] = [];
  const runnable = o.suites.filter(({ suite }) => {
    const reason = suiteSkipReason(suite, o.target, o.targetName);
    if (reason !== undefined) skipped.push({ suite: suite.name, reason });
    return reason === undefined;
  });
  for (const s of skipped) line(`skipped ${s.suite}: ${s.reason}`);
  const planned = o.seeds.flatMap((seed) => runnable.map((s) => ({ seed, ...s })));
  try {
    const first = await snapshot(probe);
    for (const [index, { seed, suite, file }] of planned.entries()) {
      const shown = relative(process.cwd(), file) || file;
      const replay = `npx limbo run ${shown} --target ${o.targetName}${o.replayFlags ?? ''} --seed ${seed}`;
      line(`[${index + 1}/${planned.length}] ${suite.name} seed ${seed}`);
      const before = await snapshot(probe);
      let error: string | undefined;
      let runDir: string | undefined;
      const startedMs = performance.now();
      const sink = o.progress?.({ index, total: planned.length, seed });
      const { verdicts } = await runSuites({
        target: o.target,
        suites: [{ file, suite }],
        seed,
        runOptions: {
          outRoot: o.outRoot,
          ...(o.toxiproxyUrl !== undefined ? { toxiproxyUrl: o.toxiproxyUrl } : {}),
          ...o.runOptions,
        },
        replayOf: () => replay,
        hooks: {
          onRunFailed: (_v, message) => (error = message),
          onVerdict: (res) => (runDir = res.runDir),
          ...(o.onSignal ? { onSignal: o.onSignal } : {}),
          ...(sink ? { progress: () => sink } : {}),
        },
      });
      sink?.done();
      const verdict = error === undefined ? verdicts[0] : undefined;
      const leaks = await settledLeaks(probe, before, settleMs, fdSlack);
      if (o.reclaim ?? true) reclaim(leaks, before, await snapshot(probe), tmpDir);
      const run = classify(suite, o.targetName, seed, verdict, error, leaks, replay, runDir);
      run.seconds = (performance.now() - startedMs) / 1000;
      runs.push(run);
      line(describeRun(run));
    }
    // Over the whole soak only fd growth is judged (the rest was judged run by run). HTTP
    // keep-alive sockets (Node's global agent: the Docker engine client's) close after 5 s idle,
    // so a pool the last run used is waited out, bounded, before it is called a leak.
    const overallLeaks = await settledLeaks(probe, first, Math.max(settleMs, IDLE_SOCKET_CLOSE_MS), fdSlack, [
      'fds',
    ]);
    const rows = rowsOf(
      runs,
      planned.map((p) => p.suite.name),
    );
    const total = totalOf(rows);
    const ok =
      total.hung + total.lost + total.duplicated + total.leaks + total.falseAlarms + total.errors === 0 &&
      overallLeaks.length === 0;
    return { rows, total, runs, overallLeaks, skipped, ok };
  } finally {
    restoreTmp();
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

/** Leaks after a run, waiting (bounded) for processes and sockets that are still closing. */
async function settledLeaks(
  probe: LeakProbe,
  before: Snapshot,
  settleMs: number,
  fdSlack: number,
  kinds?: readonly Leak['kind'][],
): Promise<Leak[]> {
  const deadline = performance.now() + settleMs;
  for (;;) {
    const leaks = leaksBetween(before, await snapshot(probe), fdSlack).filter(
      (l) => kinds === undefined || kinds.includes(l.kind),
    );
    if (leaks.length === 0 || performance.now() >= deadline) return leaks;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Kills leaked processes and deletes leaked temp entries, so one leak is counted once. */
function reclaim(leaks: readonly Leak[], before: Snapshot, now: Snapshot, tmpDir: string): void {
  const known = new Set(before.processes.map((p) => p.pid));
  if (leaks.some((l) => l.kind === 'process'))
    for (const p of now.processes) {
      if (known.has(p.pid)) continue;
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  const tempBefore = new Set(before.tempEntries);
  for (const e of now.tempEntries)
    if (!tempBefore.has(e)) rmSync(join(tmpDir, e), { recursive: true, force: true });
}

function classify(
  suite: Suite,
  target: string,
  seed: number,
  verdict: VerdictFile | undefined,
  error: string | undefined,
  leaks: Leak[],
  replay: string,
  runDir: string | undefined,
): SoakRun {
  const base = {
    suite: suite.name,
    seed,
    leaks,
    replay,
    seconds: 0,
    ...(runDir !== undefined ? { runDir } : {}),
  };
  if (verdict === undefined)
    return {
      ...base,
      verdict: 'error',
      hung: 0,
      lost: 0,
      duplicated: 0,
      falseAlarm: false,
      error: error ?? '',
    };
  const check = (name: string): VerdictFile['checks'][number] | undefined =>
    verdict.checks.find((c) => c.name === name && c.verdict === 'fail');
  const hanging = check('noClientLeftHanging');
  const hung = hanging ? Number(hanging.evidence.details.hung ?? 1) : 0;
  const effects = check('exactlyOnce')?.summary ?? '';
  const lost = (effects.match(/was lost/g) ?? []).length;
  const duplicated = (effects.match(/applied twice|no subset of the unknown adds/g) ?? []).length;
  const documentedPass = documentedVerdict(suite, target) === 'pass';
  const falseAlarm = verdict.verdict !== 'pass' && documentedPass && hung + lost + duplicated === 0;
  return { ...base, verdict: verdict.verdict, hung, lost, duplicated, falseAlarm };
}

function describeRun(r: SoakRun): string {
  const parts = [`  ${r.verdict}`, `${r.seconds.toFixed(1)} s`];
  if (r.hung) parts.push(`${r.hung} hung`);
  if (r.lost) parts.push(`${r.lost} lost`);
  if (r.duplicated) parts.push(`${r.duplicated} duplicated`);
  if (r.falseAlarm) parts.push('FALSE ALARM');
  if (r.error !== undefined) parts.push(`run failed: ${r.error}`);
  for (const l of r.leaks) parts.push(`LEAK ${l.detail}`);
  if (r.verdict !== 'pass' || r.leaks.length > 0) {
    if (r.runDir !== undefined) parts.push(`run directory: ${r.runDir}`);
    parts.push(`replay: ${r.replay}`);
  }
  return parts.join(' · ');
}

function emptyRow(suite: string): SoakRow {
  return { suite, runs: 0, hung: 0, lost: 0, duplicated: 0, leaks: 0, falseAlarms: 0, errors: 0, seconds: 0 };
}

/** One row per suite of `order`, its runs added up (also what `limbo merge` sums shards by). */
export function rowsOf(runs: readonly SoakRun[], order: readonly string[]): SoakRow[] {
  const rows = new Map<string, SoakRow>();
  for (const name of order) if (!rows.has(name)) rows.set(name, emptyRow(name));
  for (const r of runs) {
    const row = rows.get(r.suite)!;
    row.runs++;
    row.hung += r.hung;
    row.lost += r.lost;
    row.duplicated += r.duplicated;
    row.leaks += r.leaks.length;
    row.falseAlarms += r.falseAlarm ? 1 : 0;
    row.errors += r.verdict === 'error' ? 1 : 0;
    row.seconds += r.seconds;
  }
  return [...rows.values()];
}

/** The rows added up into the table's total row. */
export function totalOf(rows: readonly SoakRow[]): SoakRow {
  const t = emptyRow('total');
  for (const r of rows) {
    t.runs += r.runs;
    t.hung += r.hung;
    t.lost += r.lost;
    t.duplicated += r.duplicated;
    t.leaks += r.leaks;
    t.falseAlarms += r.falseAlarms;
    t.errors += r.errors;
    t.seconds += r.seconds;
  }
  return t;
}

export function soakTable(result: Pick<SoakResult, 'rows' | 'total'>): string {
  const w = Math.max(5, ...result.rows.map((r) => r.suite.length)) + 2;
  const cols = ['runs', 'hung', 'lost', 'duplicated', 'leaks', 'false alarms', 'errors', 'seconds'];
  const row = (name: string, values: string[]): string =>
    name.padEnd(w) + values.map((v, i) => v.padStart((cols[i] as string).length + 2)).join('') + '\n';
  let out = row('suite', cols);
  for (const r of [...result.rows, result.total])
    out += row(r.suite, [
      String(r.runs),
      String(r.hung),
      String(r.lost),
      String(r.duplicated),
      String(r.leaks),
      String(r.falseAlarms),
      String(r.errors),
      r.seconds.toFixed(0),
    ]);
  return out;
}

/** Points TMPDIR (and TMP, TEMP) at `dir` for this process and every child it starts. */
function setTmp(dir: string): () => void {
  const saved = { TMPDIR: process.env.TMPDIR, TMP: process.env.TMP, TEMP: process.env.TEMP };
  process.env.TMPDIR = process.env.TMP = process.env.TEMP = dir;
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
