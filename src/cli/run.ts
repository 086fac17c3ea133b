// `limbo run <suite files or folders…>`: loads the suites, runs each against the target with
// one seed (printed first), shows progress, prints each verdict with its evidence and a
// summary table, and exits 0 pass, 1 a check failed, 2 bad usage or input, 3 inconclusive.
// A failing run prints the command that replays it.
import { relative } from 'node:path';
import type { Verdict } from '../checkers/checker.js';
import { loadSuites } from '../runner/load-suites.js';
import {
  runItselfFailed,
  runSuites,
  undocumentedVerdicts,
  verdictOfRuns,
  wasSkipped,
} from '../runner/run-suites.js';
import { resolveTarget } from '../targets/registry.js';
import { UsageError } from '../util/errors.js';
import { formatHelp, parseOptions } from '../util/options.js';
import { randomSeed } from '../util/random.js';
import type { VerdictFile } from '../run-data/verdict.js';
import { formatDiagnosis } from '../diagnose/sentence.js';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import { progressPrinter } from './progress.js';
import { chooseRuntime, dockerRunOptions } from './docker-options.js';
import { runPrometheusChoice } from './run-prometheus-choice.js';
import {
  checkCoverageRuntime,
  coverageOption,
  outOption,
  planOption,
  runtimeOption,
  shardOption,
  targetOption,
  toxiproxyUrlOption,
} from './common-options.js';
import {
  parseShard,
  planLine,
  requireShardSeed,
  shardEntries,
  writeShardManifest,
  type Shard,
} from '../runner/shard.js';
import type { LoadedSuite } from '../runner/load-suites.js';
import type { DocumentedVerdict } from '../runner/run-suites.js';

const options = {
  target: targetOption,
  runtime: runtimeOption,
  seed: { type: 'int', min: 0, max: 4294967295, description: 'the seed of all randomness (default: random)' },
  out: outOption,
  toxiproxyUrl: toxiproxyUrlOption,
  coverage: coverageOption,
  ...dockerRunOptions,
  prometheus: {
    type: 'enum',
    values: ['auto', 'on', 'off'] as const,
    description:
      'one Prometheus per run scraping every service and the runner at 1 s (on: required; auto: when installed) [default: auto when a suite has PromQL assertions, else off]',
  },
  expectDocumented: {
    type: 'bool',
    default: false,
    description:
      'exit 0 only if every verdict is the documented one: fail where the suite lists the target in expectedToFailOn (or, on reference+bug:<x>, where it catches x), pass or fail where it lists it in timingDependentOn, pass elsewhere (for CI on targets with known failures)',
  },
  shard: { ...shardOption, description: `${shardOption.description} (split by suite)` },
  plan: planOption,
} as const;

/** What a shard of `limbo run` leaves in its manifest for `limbo merge`. */
export interface RunShardResult {
  /** One per suite of the shard's part, in its order; runDir relative to the manifest. */
  verdicts: (VerdictFile & { runDir?: string })[];
  documented: { suite: string; expected: DocumentedVerdict }[];
  expectDocumented: boolean;
}

/** A suite's name in the list a shard splits: its file as given, relative to the working directory. */
export const suiteItem = (s: LoadedSuite): string => relative(process.cwd(), s.file) || s.file;

export function exitCodeOf(verdict: Verdict): number {
  return verdict === 'pass' ? exitCodes.pass : verdict === 'fail' ? exitCodes.fail : exitCodes.inconclusive;
}

/** A verdict for the console; with its run directory, the trace commands it prints can be pasted as they are. */
export function formatVerdict(v: VerdictFile, runDir = '<run directory>'): string {
  const lines = [
    `${v.suite} [${v.target}] seed ${v.seed}: ${wasSkipped(v) ? 'SKIPPED' : v.verdict.toUpperCase()}`,
  ];
  for (const c of v.checks) {
    lines.push(`  ${(c.skipped !== undefined ? 'skipped' : c.verdict).padEnd(12)} ${c.name}: ${c.summary}`);
    const ids = c.evidence.invocationIds ?? [];
    if (c.verdict !== 'pass' && ids.length > 0)
      lines.push(
        `               invocation ids: ${ids.slice(0, 20).join(' ')}${ids.length > 20 ? ` … (${ids.length})` : ''}`,
        `               see one: npx limbo trace ${ids[0]} --run ${runDir}`,
      );
  }
  if (v.diagnosis !== undefined) lines.push(...formatDiagnosis(v.diagnosis, 3, runDir));
  for (const e of v.runErrors) lines.push(`  run error: ${e}`);
  return lines.join('\n');
}

export function summaryTable(verdicts: readonly VerdictFile[]): string {
  const w = Math.max(5, ...verdicts.map((v) => v.suite.length)) + 2;
  const t = Math.max(6, ...verdicts.map((v) => v.target.length)) + 2;
  const row = (a: string, b: string, c: string, d: string, e: string, f: string): string =>
    a.padEnd(w) + b.padEnd(t) + c.padEnd(14) + d.padStart(8) + e.padStart(8) + f.padStart(10) + '\n';
  let out = row('suite', 'target', 'verdict', 'ops', 'open', 'seconds');
  for (const v of verdicts)
    out += row(
      v.suite,
      v.target,
      wasSkipped(v) ? 'skipped' : v.verdict,
      String(v.ops.total),
      String(v.ops.open),
      (v.durationMs / 1000).toFixed(1),
    );
  return out;
}

export {
  SKIPPED_CHECK,
  skippedVerdict,
  verdictOfRuns,
  wasSkipped,
  undocumentedVerdicts,
  type DocumentedVerdict,
} from '../runner/run-suites.js';
import { commandSummaries } from './command-summaries.js';

export const runCommand: Command = {
  name: 'run',
  summary: commandSummaries.run,
  async run(argv, env) {
    const parsed = parseOptions(options, argv, env);
    if (parsed.help) {
      process.stdout.write(
        formatHelp('limbo run <suite files or folders…> [options]', runCommand.summary, options),
      );
      return exitCodes.pass;
    }
    if (parsed.positionals.length === 0)
      throw new UsageError('name at least one suite file or folder (e.g. chaos)');
    const o = parsed.options;
    const shard: Shard | undefined = o.shard !== undefined ? parseShard(o.shard) : undefined;
    requireShardSeed(shard, o.seed);
    checkCoverageRuntime(o.coverage, o.runtime);
    const target = await resolveTarget(o.target, await chooseRuntime(o.runtime, env, o, o.target));
    const seed = o.seed ?? randomSeed();
    process.stdout.write(`seed ${seed}\n`);
    const all = await loadSuites(parsed.positionals);
    const entries = shardEntries(all, shard);
    const suites = entries.map((e) => e.item);
    if (o.plan) {
      for (const { index, item } of entries)
        process.stdout.write(planLine(index, all.length, suiteItem(item), item.suite.seed ?? seed) + '\n');
      return exitCodes.pass;
    }
    const runDirs = new Map<VerdictFile, string>();
    const prometheus = runPrometheusChoice(
      o.prometheus,
      suites.map((s) => s.suite),
    );
    process.stdout.write(`prometheus ${prometheus.summary}\n`);
    const { verdicts, documented } = await runSuites({
      target,
      suites,
      seed,
      runOptions: {
        outRoot: o.out,
        ...(o.toxiproxyUrl !== undefined ? { toxiproxyUrl: o.toxiproxyUrl } : {}),
        ...prometheus.runOptions,
        ...(o.coverage ? { coverage: true } : {}),
      },
      replayOf: (file, suite) => {
        const shown = relative(process.cwd(), file) || file;
        const onRuntime = o.runtime === 'local' ? '' : ` --runtime ${o.runtime}`;
        return `npx limbo run ${shown} --target ${o.target}${onRuntime}${suite.seed === undefined ? ` --seed ${seed}` : ''}`;
      },
      hooks: {
        onSuiteStart: (suite) => process.stdout.write(`\n== ${suite.name}: ${suite.why}\n`),
        onSkipped: (v) => process.stdout.write(formatVerdict(v) + '\n'),
        onRunFailed: (v, message) =>
          process.stdout.write(`${v.suite}: the run itself failed: ${message}\n  replay: ${v.replay}\n`),
        onSignal: (suite, signal) =>
          process.stderr.write(`\n${signal}: stopping ${suite.name}, cleaning up…\n`),
        progress: () => progressPrinter(),
        onVerdict: (res, suite) => {
          runDirs.set(res.verdict, res.runDir);
          process.stdout.write(formatVerdict(res.verdict, res.runDir) + `\n  run directory: ${res.runDir}\n`);
          if (res.verdict.verdict !== 'pass') process.stdout.write(`  replay: ${res.verdict.replay}\n`);
          if (res.verdict.verdict === 'fail' && suite.expectedToFailOn.includes(target.name))
            process.stdout.write(`  (expected: this suite documents that ${target.name} fails it)\n`);
        },
      },
    });
    process.stdout.write('\n' + summaryTable(verdicts));
    process.stdout.write(`seed ${seed}\n`);
    if (shard !== undefined) {
      const result: RunShardResult = {
        verdicts: verdicts.map((v) => {
          const dir = runDirs.get(v);
          return dir !== undefined ? { ...v, runDir: relative(o.out, dir) } : v;
        }),
        documented,
        expectDocumented: o.expectDocumented,
      };
      const file = writeShardManifest(o.out, {
        command: 'run',
        shard,
        seed,
        target: o.target,
        items: all.map(suiteItem),
        part: suites.map(suiteItem),
        endedAt: new Date().toISOString(),
        result,
      });
      process.stdout.write(`shard ${shard.index}/${shard.count}: ${file} (limbo merge reads it)\n`);
      if (suites.length === 0) return exitCodes.pass; // more shards than suites: nothing fell to this one
    }
    if (o.coverage) process.stdout.write(`coverage: npx limbo coverage ${o.out}\n`);
    if (o.expectDocumented) {
      const changed = undocumentedVerdicts(verdicts, documented);
      for (const v of changed) {
        const expected = documented.find((d) => d.suite === v.suite)?.expected;
        process.stdout.write(
          runItselfFailed(v)
            ? `verdict changed: ${v.suite} on ${v.target} did not run (${v.runErrors.join('; ')}), documented ${expected}\n`
            : `verdict changed: ${v.suite} on ${v.target} is ${v.verdict}, documented ${expected}\n`,
        );
      }
      if (changed.length === 0)
        process.stdout.write(`every verdict is the documented one for ${target.name}\n`);
      return changed.length === 0 ? exitCodes.pass : exitCodes.fail;
    }
    if (verdicts.length > 0 && verdicts.every(wasSkipped))
      process.stdout.write(`nothing ran: every suite was skipped on ${target.name} (inconclusive)\n`);
    return exitCodeOf(verdictOfRuns(verdicts));
  },
};
