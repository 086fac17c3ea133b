// `limbo merge <shard out dirs…> --out DIR`: the N shards of one `limbo run`, `explore`,
// `detect` or `soak` (each made with --shard k/N, each leaving limbo-shard-k-of-N.json in its
// --out) put back together as the unsharded command would have reported them: its table, its
// files in DIR, and its exit code (for run: fail beats inconclusive beats pass).
//
//   shard dirs ─▶ manifests ─▶ completeShards (every k once, one run) ─▶ per command:
//     run     ─▶ summary table, verdicts.json, junit.xml, index.html (links to each report.html)
//     explore ─▶ the runs in schedule order, the seed files saved, explore.json
//     detect  ─▶ detection table, detection/detection.json + detection.html
//     soak    ─▶ soak table, soak.json
import { mkdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { detectionTable, writeDetection, type DetectionReport, type SuiteVerdict } from '../detect/detect.js';
import { escapeHtml } from '../report/html-escape.js';
import { toJUnitXml } from '../report/junit.js';
import type { VerdictFile } from '../run-data/verdict.js';
import { undocumentedVerdicts, type DocumentedVerdict } from '../runner/run-suites.js';
import { completeShards, readShardManifests, type FoundManifest } from '../runner/shard.js';
import { rowsOf, soakTable, totalOf, type SoakRun } from '../soak/soak.js';
import { UsageError } from '../util/errors.js';
import { formatHelp, parseOptions } from '../util/options.js';
import { exitCodes, type Command } from './command.js';
import { commandSummaries } from './command-summaries.js';
import type { ExploreShardResult } from './explore.js';
import { exitCodeOf, summaryTable, verdictOfRuns, type RunShardResult } from './run.js';
import type { SoakShardResult } from './soak.js';

const options = {
  out: {
    type: 'string',
    default: 'runs-merged',
    // Not LIMBO_OUT: a CI job that sets it for its shards' runs must not merge into them.
    env: 'LIMBO_MERGE_OUT',
    description: 'where the merged files go (verdicts.json, junit.xml, index.html; detection/; soak.json)',
  },
} as const;

const write = (line: string): void => {
  process.stdout.write(line + '\n');
};

export const mergeCommand: Command = {
  name: 'merge',
  summary: commandSummaries.merge,
  run: (argv, env) => Promise.resolve().then(() => merge(argv, env)),
};

function merge(argv: string[], env: NodeJS.ProcessEnv): number {
  const parsed = parseOptions(options, argv, env);
  if (parsed.help) {
    process.stdout.write(
      formatHelp('limbo merge <shard out dirs…> [options]', mergeCommand.summary, options) +
        '\nEach directory is the --out of one shard (limbo run|explore|detect|soak --shard k/N);\n' +
        'every shard 1..N of one run must be among them. Exit codes are the unsharded command’s.\n',
    );
    return exitCodes.pass;
  }
  if (parsed.positionals.length === 0)
    throw new UsageError('name the shards’ out directories (e.g. limbo merge shard-1 shard-2 shard-3)');
  const shards = completeShards(parsed.positionals.flatMap((d) => readShardManifests(d)));
  const first = shards[0]!.manifest;
  const out = parsed.options.out;
  mkdirSync(out, { recursive: true });
  write(
    `merging ${shards.length} shard(s) of limbo ${first.command} on ${first.target}, seed ${first.seed}, ${first.items.length} item(s)`,
  );
  switch (first.command) {
    case 'run':
      return mergeRun(shards, out);
    case 'explore':
      return mergeExplore(shards, out);
    case 'detect':
      return mergeDetect(shards, out);
    case 'soak':
      return mergeSoak(shards, out);
  }
}

/** Each shard's results, item by item, in the unsharded list's order. */
function inItemOrder<T>(
  shards: readonly FoundManifest[],
  resultsOf: (f: FoundManifest) => readonly T[],
): T[] {
  const items = shards[0]!.manifest.items;
  const placed = new Map<string, T>();
  for (const f of shards) {
    const results = resultsOf(f);
    if (results.length !== f.manifest.part.length)
      throw new UsageError(
        `${f.file}: ${results.length} result(s) for the ${f.manifest.part.length} item(s) of its shard`,
      );
    f.manifest.part.forEach((item, j) => placed.set(item, results[j]!));
  }
  return items.flatMap((item) => (placed.has(item) ? [placed.get(item)!] : []));
}

/** A path a shard wrote relative to its directory, as seen from `out`. */
const fromOut = (f: FoundManifest, path: string, out: string): string =>
  relative(out, isAbsolute(path) ? path : join(f.dir, path));

function mergeRun(shards: readonly FoundManifest[], out: string): number {
  type Placed = {
    verdict: VerdictFile;
    documented: { suite: string; expected: DocumentedVerdict };
    report?: string;
  };
  const placed = inItemOrder(shards, (f) => {
    const r = f.manifest.result as RunShardResult;
    if (r.documented.length !== r.verdicts.length)
      throw new UsageError(
        `${f.file}: ${r.verdicts.length} verdict(s) but ${r.documented.length} documented`,
      );
    return r.verdicts.map((v, j): Placed => {
      const { runDir, ...verdict } = v;
      return {
        verdict,
        documented: r.documented[j]!,
        ...(runDir !== undefined ? { report: join(fromOut(f, runDir, out), 'report.html') } : {}),
      };
    });
  });
  const verdicts = placed.map((p) => p.verdict);
  process.stdout.write('\n' + summaryTable(verdicts));
  writeFileSync(join(out, 'verdicts.json'), JSON.stringify(verdicts, null, 2) + '\n');
  writeFileSync(
    join(out, 'junit.xml'),
    toJUnitXml(
      verdicts.map((v) => ({
        name: v.suite,
        target: v.target,
        seed: v.seed,
        durationMs: v.durationMs,
        timestamp: v.startedAt,
        checks: v.checks,
        ...(v.diagnosis !== undefined ? { diagnosis: v.diagnosis } : {}),
      })),
    ),
  );
  const verdict = verdictOfRuns(verdicts);
  writeFileSync(join(out, 'index.html'), runIndexHtml(placed, verdict));
  write(`wrote ${join(out, 'verdicts.json')}, ${join(out, 'junit.xml')} and ${join(out, 'index.html')}`);
  // As `limbo run --expect-documented` when every shard ran with it.
  if (shards.every((f) => (f.manifest.result as RunShardResult).expectDocumented)) {
    const changed = undocumentedVerdicts(
      verdicts,
      placed.map((p) => p.documented),
    );
    for (const v of changed)
      write(
        `verdict changed: ${v.suite} on ${v.target} is ${v.verdict}, documented ${placed.find((p) => p.verdict === v)?.documented.expected}`,
      );
    if (changed.length === 0) write(`every verdict is the documented one for ${shards[0]!.manifest.target}`);
    return changed.length === 0 ? exitCodes.pass : exitCodes.fail;
  }
  write(`verdict: ${verdict}`);
  return exitCodeOf(verdict);
}

function runIndexHtml(placed: readonly { verdict: VerdictFile; report?: string }[], verdict: string): string {
  const rows = placed.map(({ verdict: v, report }) => {
    const name =
      report !== undefined
        ? `<a href="${escapeHtml(report)}">${escapeHtml(v.suite)}</a>`
        : escapeHtml(v.suite);
    return `<tr class="${escapeHtml(v.verdict)}"><td>${name}</td><td>${escapeHtml(v.target)}</td><td>${v.seed}</td><td>${escapeHtml(v.verdict)}</td><td>${v.ops.total}</td><td>${v.ops.open}</td><td>${(v.durationMs / 1000).toFixed(1)}</td></tr>`;
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>limbo: ${escapeHtml(verdict)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:.2em .8em;text-align:left}.fail td{background:#fdd}.inconclusive td{background:#ffd}</style>
</head><body>
<h1>limbo run: ${escapeHtml(verdict)}</h1>
<table><tr><th>suite</th><th>target</th><th>seed</th><th>verdict</th><th>ops</th><th>open</th><th>seconds</th></tr>
${rows.join('\n')}
</table>
</body></html>
`;
}

function mergeExplore(shards: readonly FoundManifest[], out: string): number {
  const results = shards.map((f) => f.manifest.result as ExploreShardResult);
  const runs = results
    .flatMap((r, k) => r.runs.map((run) => ({ ...run, runDir: fromOut(shards[k]!, run.runDir, out) })))
    .sort((a, b) => a.index - b.index);
  const found = results.flatMap((r) => r.found);
  const budget = results.some((r) => r.stoppedBy === 'budget');
  for (const r of runs)
    write(
      `run ${r.index + 1} seed ${r.seed}: ${r.verdict}${r.failed.length > 0 ? ` (${r.failed.join(', ')} failed)` : ''}  ${r.runDir}`,
    );
  const failing = runs.filter((r) => r.failed.length > 0).length;
  write(
    `\nexplored ${runs.length} schedule(s)${budget ? ' (budget ran out in a shard)' : ''}: ${failing} failed`,
  );
  for (const f of found) write(`  saved ${f}`);
  writeFileSync(
    join(out, 'explore.json'),
    JSON.stringify(
      { seed: shards[0]!.manifest.seed, runs, found, stoppedBy: budget ? 'budget' : 'runs' },
      null,
      2,
    ) + '\n',
  );
  write(`wrote ${join(out, 'explore.json')}`);
  return found.length > 0 ? exitCodes.fail : exitCodes.pass;
}

function mergeDetect(shards: readonly FoundManifest[], out: string): number {
  const reports = shards.map((f) => f.manifest.result as DetectionReport);
  const switches = inItemOrder(shards, (f) => (f.manifest.result as DetectionReport).switches);
  // A suite a switch of several shards used ran on plain reference in each of them, with the
  // same seed: it counts once, and a false alarm in any of them is one.
  const reference = new Map<string, SuiteVerdict>();
  for (const r of reports)
    for (const v of r.reference) {
      const had = reference.get(v.suite);
      if (had === undefined || (had.verdict !== 'fail' && v.verdict === 'fail')) reference.set(v.suite, v);
    }
  const caught = switches.filter((s) => s.caught).length;
  const merged: DetectionReport = {
    seed: shards[0]!.manifest.seed,
    startedAt: reports.map((r) => r.startedAt).sort()[0] ?? new Date().toISOString(),
    switches,
    score: { caught, total: switches.length },
    missedMustCatch: switches.filter((s) => s.mustCatch && !s.caught).map((s) => s.switch),
    reference: [...reference.values()],
    falseAlarms: [...reference.values()].filter((v) => v.verdict === 'fail'),
  };
  const files = writeDetection(merged, join(out, 'detection'));
  process.stdout.write('\n' + detectionTable(merged));
  write(`wrote ${files.json} and ${files.html}`);
  if (merged.missedMustCatch.length > 0)
    write(`missed must-catch switch(es): ${merged.missedMustCatch.join(', ')}`);
  for (const f of merged.falseAlarms) write(`false alarm on reference: ${f.suite} (${f.failing.join(', ')})`);
  return merged.missedMustCatch.length > 0 || merged.falseAlarms.length > 0 ? exitCodes.fail : exitCodes.pass;
}

function mergeSoak(shards: readonly FoundManifest[], out: string): number {
  const results = shards.map((f) => f.manifest.result as SoakShardResult);
  const perSeed = inItemOrder(shards, (f) => {
    const r = f.manifest.result as SoakShardResult;
    return f.manifest.part.map((seed) => r.runs.filter((run) => String(run.seed) === seed));
  });
  const runs: SoakRun[] = perSeed.flat();
  const skipped = results.find((r) => r.skipped.length > 0)?.skipped ?? [];
  const order = (results[0]?.suites ?? []).filter((s) => !skipped.some((k) => k.suite === s));
  const rows = rowsOf(runs, order);
  const total = totalOf(rows);
  const overallLeaks = results.flatMap((r) => r.overallLeaks);
  const ok =
    total.hung + total.lost + total.duplicated + total.leaks + total.falseAlarms + total.errors === 0 &&
    overallLeaks.length === 0;
  process.stdout.write('\n' + soakTable({ rows, total }));
  for (const l of overallLeaks) write(`over the whole soak (a shard): LEAK ${l.detail}`);
  const seeds = shards[0]!.manifest.items.map(Number);
  writeFileSync(
    join(out, 'soak.json'),
    JSON.stringify(
      { seeds, target: shards[0]!.manifest.target, rows, total, runs, overallLeaks, skipped, ok },
      null,
      2,
    ) + '\n',
  );
  write(`wrote ${join(out, 'soak.json')}`);
  if (runs.length === 0) {
    process.stderr.write(
      `limbo merge: nothing ran: every suite is skipped on ${shards[0]!.manifest.target}\n`,
    );
    return exitCodes.usage;
  }
  write(ok ? 'soak: clean' : 'soak: NOT clean (see the shards’ runs)');
  return ok ? exitCodes.pass : exitCodes.fail;
}
