// What a set of runs reached in limbo's own code: the coverage.json of each run directory
// (coverage/collect.ts) merged with istanbul's library, a line and branch figure per source
// file, and the branches no run took — error paths first, since those are the situations a
// chaos suite exists to create (a catch, a retry or backoff, a step-down, a deadline, a give-up).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import libCoverage from 'istanbul-lib-coverage';
import { runFiles } from '../run-data/files.js';
import { packageRoot } from './collect.js';
import { GAP_PREFIX, matchReasons, reasonLine, type BranchReason } from './reasons.js';

export type CoverageMap = libCoverage.CoverageMap;

/** Run directories are found this deep under a folder given (runs/<suite>/<time>/ is two). */
const MAX_DEPTH = 4;

/** Every coverage.json at or under `paths` (a run directory, or a folder of them). */
export function findCoverageFiles(paths: readonly string[]): string[] {
  return findRunFiles(paths, runFiles.coverage);
}

/** Every file named `name` in a run directory at or under `paths` (a file given is taken as it is). */
export function findRunFiles(paths: readonly string[], name: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number): void => {
    const file = join(dir, name);
    if (existsSync(file)) {
      out.push(file);
      return;
    }
    if (depth >= MAX_DEPTH) return;
    for (const e of readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory() && e.name !== runFiles.logs && e.name !== 'data')
        walk(join(dir, e.name), depth + 1);
  };
  for (const p of paths) {
    if (!existsSync(p)) throw new Error(`no such file or folder: ${p}`);
    if (statSync(p).isFile()) {
      if (p.endsWith(name)) out.push(p);
    } else walk(p, 0);
  }
  return [...new Set(out)].sort();
}

/** The coverage of every file given, summed. */
export function mergeCoverage(files: readonly string[]): CoverageMap {
  const map = libCoverage.createCoverageMap({});
  for (const f of files) {
    let data: libCoverage.CoverageMapData;
    try {
      data = JSON.parse(readFileSync(f, 'utf8')) as libCoverage.CoverageMapData;
    } catch (err) {
      throw new Error(`${f} is not a coverage map: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    map.merge(data);
  }
  return map;
}

export interface FileFigures {
  file: string;
  lines: { covered: number; total: number };
  branches: { covered: number; total: number };
}

/** Per-file line and branch figures for the files under `prefix` (e.g. `src/services/`), and their sum. */
export function coverageFigures(
  map: CoverageMap,
  prefix: string,
): { files: FileFigures[]; total: Omit<FileFigures, 'file'> } {
  const files: FileFigures[] = [];
  const total = { lines: { covered: 0, total: 0 }, branches: { covered: 0, total: 0 } };
  for (const file of map
    .files()
    .filter((f) => f.startsWith(prefix))
    .sort()) {
    const s = map.fileCoverageFor(file).toSummary();
    const f = {
      file,
      lines: { covered: s.lines.covered, total: s.lines.total },
      branches: { covered: s.branches.covered, total: s.branches.total },
    };
    files.push(f);
    for (const k of ['lines', 'branches'] as const) {
      total[k].covered += f[k].covered;
      total[k].total += f[k].total;
    }
  }
  return { files, total };
}

export interface UnreachedBranch {
  file: string;
  line: number;
  /** The branch's kind (if, cond-expr, binary-expr, switch, default-arg) and which arm no run took. */
  kind: string;
  arm: number;
  /** The source line, trimmed. */
  text: string;
  /** On an error path: a catch, retry, backoff, step-down, deadline, timeout, give-up, failure. */
  errorPath: boolean;
}

const ERROR_PATH =
  /catch|retr(y|ies)|backoff|step.?down|stepDown|deadline|timeout|timed.?out|give.?up|giveUp|abort|reject|fail|error|Error|lost|refus|unavailable|throw/;

/** Every branch arm under `prefix` no run took, error paths first, then by file and line. */
export function unreachedBranches(map: CoverageMap, prefix: string): UnreachedBranch[] {
  const out: UnreachedBranch[] = [];
  for (const file of map.files().filter((f) => f.startsWith(prefix))) {
    const fc = map.fileCoverageFor(file);
    const data = fc.toJSON() as libCoverage.FileCoverageData;
    const source = readSource(file);
    for (const [id, branch] of Object.entries(data.branchMap)) {
      const counts = data.b[id] ?? [];
      counts.forEach((count, arm) => {
        if (count > 0) return;
        const loc = branch.locations[arm] ?? branch.loc;
        const line = loc.start.line || branch.loc.start.line;
        const text = (source[line - 1] ?? '').trim();
        out.push({ file, line, kind: branch.type, arm, text, errorPath: ERROR_PATH.test(text) });
      });
    }
  }
  return out.sort(
    (a, b) =>
      Number(b.errorPath) - Number(a.errorPath) ||
      a.file.localeCompare(b.file) ||
      a.line - b.line ||
      a.arm - b.arm,
  );
}

function readSource(file: string): string[] {
  try {
    return readFileSync(join(packageRoot, file), 'utf8').split('\n');
  } catch {
    return [];
  }
}

const pct = (covered: number, total: number): string =>
  total === 0 ? '   -  ' : `${((100 * covered) / total).toFixed(1).padStart(5)}%`;

/** What `formatCoverage` weighs the unreached arms against. */
export interface CoverageJudgement {
  /** Reasons for arms no test can reach (coverage/reasons.ts); those of other files are ignored. */
  reasons?: readonly BranchReason[];
  /** Where the reasons came from, for the text. */
  reasonsFile?: string;
  /** The share of branches (percent) that must be reached. */
  goalPct?: number;
  /** Print every unexplained arm as a reasons-file line to fill in. */
  reasonLines?: boolean;
}

/** The coverage goal: enough branches reached, and every arm still unreached explained. */
export interface CoverageGoal {
  branchesPct: number;
  goalPct: number;
  unexplained: number;
  gaps: number;
  stale: number;
  met: boolean;
}

/**
 * The table `limbo coverage` prints: one line a file, the sum, then up to `limit` unreached
 * branch arms (those without a reason, error paths first), then how the reasons stand; with a
 * goal, whether it is met.
 */
export function formatCoverage(
  map: CoverageMap,
  prefix: string,
  runs: number,
  limit: number,
  judge: CoverageJudgement = {},
): string {
  return judgeCoverage(map, prefix, runs, limit, judge).text;
}

/** `formatCoverage`'s text and, with a goal, the goal's standing. */
export function judgeCoverage(
  map: CoverageMap,
  prefix: string,
  runs: number,
  limit: number,
  judge: CoverageJudgement = {},
): { text: string; goal?: CoverageGoal } {
  const { files, total } = coverageFigures(map, prefix);
  if (files.length === 0) return { text: `no coverage of ${prefix} in ${runs} run(s)\n` };
  const width = Math.max(...files.map((f) => f.file.length), 5);
  const row = (name: string, f: Omit<FileFigures, 'file'>): string =>
    `${name.padEnd(width)}  ${pct(f.lines.covered, f.lines.total)} ${`${f.lines.covered}/${f.lines.total}`.padStart(11)}  ${pct(f.branches.covered, f.branches.total)} ${`${f.branches.covered}/${f.branches.total}`.padStart(9)}`;
  const lines = [
    `coverage of ${prefix} over ${runs} run(s)`,
    `${'file'.padEnd(width)}  ${'lines'.padStart(19)}  ${'branches'.padStart(16)}`,
    ...files.map((f) => row(f.file, f)),
    row('total', total),
  ];
  const unreached = unreachedBranches(map, prefix);
  const reasons = (judge.reasons ?? []).filter((r) => r.file.startsWith(prefix));
  const { explained, gaps, unexplained, stale } = matchReasons(unreached, reasons);
  const errors = unexplained.filter((u) => u.errorPath).length;
  const withReasons = judge.reasons !== undefined;
  const file = judge.reasonsFile ?? 'the reasons file';
  lines.push(
    '',
    `${unreached.length} branch arm(s) no run took` +
      (withReasons
        ? `, ${explained.length} with a reason in ${file}, ${gaps.length} listed there as gaps; ${unexplained.length} with neither, `
        : ', ') +
      `${errors} on error paths` +
      (unexplained.length > limit ? ` (first ${limit}; --unreached N for more)` : '') +
      (unexplained.length > 0 && limit > 0 ? ':' : ''),
  );
  for (const u of unexplained.slice(0, limit))
    lines.push(
      judge.reasonLines === true
        ? reasonLine(u)
        : `  ${u.errorPath ? 'error ' : '      '}${u.file}:${u.line} ${u.kind}[${u.arm}]  ${u.text}`,
    );
  if (gaps.length > 0 && limit > 0) {
    lines.push('', `${gaps.length} known gap(s): situations a suite could create and none does yet:`);
    for (const g of gaps.slice(0, limit))
      lines.push(
        `  ${g.arm.file}:${g.arm.line} ${g.arm.kind}[${g.arm.arm}]  ${g.reason.reason.slice(GAP_PREFIX.length).trim()}`,
      );
  }
  if (stale.length > 0) {
    lines.push(
      '',
      `${stale.length} reason(s) match no unreached arm (a run reaches it now, or its code moved or went): remove or update them`,
    );
    for (const r of stale)
      lines.push(
        `  ${judge.reasonsFile ?? 'reasons'}:${r.at}  ${r.file}:${r.line} ${r.kind}[${r.arm}]  ${r.text}`,
      );
  }
  if (judge.goalPct === undefined) return { text: lines.join('\n') + '\n' };
  const branchesPct =
    total.branches.total === 0 ? 100 : (100 * total.branches.covered) / total.branches.total;
  const goal: CoverageGoal = {
    branchesPct,
    goalPct: judge.goalPct,
    unexplained: unexplained.length,
    gaps: gaps.length,
    stale: stale.length,
    met: branchesPct >= judge.goalPct && unexplained.length === 0 && gaps.length === 0 && stale.length === 0,
  };
  const short = [
    ...(branchesPct >= judge.goalPct ? [] : [`branches ${branchesPct.toFixed(1)}% < ${judge.goalPct}%`]),
    ...(unexplained.length === 0 ? [] : [`${unexplained.length} unreached arm(s) without a reason`]),
    ...(gaps.length === 0 ? [] : [`${gaps.length} known gap(s) no suite reaches yet`]),
    ...(stale.length === 0 ? [] : [`${stale.length} stale reason(s)`]),
  ];
  lines.push(
    '',
    goal.met
      ? `goal met: branches ${branchesPct.toFixed(1)}% ≥ ${judge.goalPct}%, every unreached arm has a reason`
      : `goal NOT met: ${short.join('; ')}`,
  );
  return { text: lines.join('\n') + '\n', goal };
}
