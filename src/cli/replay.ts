// `limbo replay <seed or suite files or folders…> --runs N`: replay fidelity. Reruns each file
// N times with the same seed, one run at a time (runSuites, so skips, run errors and Ctrl-C
// cleanup are those of `limbo run`), and reports per file how many reruns gave what it records
// (a seed file: fail with the checks it was saved with; a suite file: its documented verdict on
// the target), as a table and as <out>/replay.json. `--record` writes each seed file's measured
// rate into it (replayRates). Exit 0 when every file reproduced at --min-rate or more, 1 when
// one did not, 2 bad usage or input.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadSuites } from '../runner/load-suites.js';
import { recordReplayRate } from '../runner/seed-file.js';
import { describeExpectation, expectationOf, replay, replayTable } from '../explore/replay.js';
import { resolveTarget } from '../targets/registry.js';
import { UsageError } from '../util/errors.js';
import { formatHelp, parseOptions } from '../util/options.js';
import { randomSeed } from '../util/random.js';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import { commandSummaries } from './command-summaries.js';
import { progressPrinter } from './progress.js';
import { chooseRuntime, dockerRunOptions } from './docker-options.js';
import { runPrometheusChoice } from './run-prometheus-choice.js';
import { outOption, runtimeOption, targetOption, toxiproxyUrlOption } from './common-options.js';

const options = {
  target: targetOption,
  runtime: runtimeOption,
  runs: { type: 'int', default: 5, min: 1, max: 1000, description: 'reruns of each file' },
  seed: {
    type: 'int',
    min: 0,
    max: 4294967295,
    description: 'the seed of suite files (default: random; a seed file replays its own)',
  },
  out: { ...outOption, description: 'root of the run directories; replay.json is written here' },
  toxiproxyUrl: toxiproxyUrlOption,
  ...dockerRunOptions,
  prometheus: {
    type: 'enum',
    values: ['auto', 'on', 'off'] as const,
    description:
      'one Prometheus per run, as for limbo run [default: auto when a suite has PromQL assertions, else off]',
  },
  record: {
    type: 'bool',
    default: false,
    description:
      "write each seed file's measured rate (reproduced, runs, target, when) into its replayRates (seed files only)",
  },
  minRate: {
    type: 'int',
    default: 95,
    min: 0,
    max: 100,
    description: 'exit 0 only if every file reproduced in at least this percentage of its reruns',
  },
} as const;

export const replayCommand: Command = {
  name: 'replay',
  summary: commandSummaries.replay,
  async run(argv, env) {
    const parsed = parseOptions(options, argv, env);
    if (parsed.help) {
      process.stdout.write(
        formatHelp(
          'limbo replay <seed or suite files or folders…> --runs N [options]',
          replayCommand.summary,
          options,
        ),
      );
      return exitCodes.pass;
    }
    if (parsed.positionals.length === 0)
      throw new UsageError('name at least one seed or suite file or folder (e.g. seeds)');
    const o = parsed.options;
    const files = await loadSuites(parsed.positionals);
    const shown = (file: string): string => {
      const rel = relative(process.cwd(), file);
      return rel === '' || rel.startsWith('..') ? file : rel;
    };
    if (o.record) {
      const suiteFiles = files.filter((f) => f.seedFile === undefined);
      if (suiteFiles.length > 0)
        throw new UsageError(
          `--record writes into seed files (*.json) only; not one: ${suiteFiles.map((f) => shown(f.file)).join(', ')}`,
        );
    }
    const target = await resolveTarget(o.target, await chooseRuntime(o.runtime, env, o, o.target));
    const seed = o.seed ?? randomSeed();
    const prometheus = runPrometheusChoice(
      o.prometheus,
      files.map((f) => f.suite),
    );
    process.stdout.write(
      `replaying ${files.length} file(s) ${o.runs} time(s) each on ${target.name}` +
        (files.some((f) => f.suite.seed === undefined) ? ` (suite files: seed ${seed})` : '') +
        '\n',
    );
    const onRuntime = o.runtime === 'local' ? '' : ` --runtime ${o.runtime}`;
    const report = await replay({
      target,
      files,
      runs: o.runs,
      seed,
      runOptions: {
        outRoot: o.out,
        ...(o.toxiproxyUrl !== undefined ? { toxiproxyUrl: o.toxiproxyUrl } : {}),
        ...prometheus.runOptions,
      },
      replayOf: (file, suite) =>
        `npx limbo run ${shown(file)} --target ${o.target}${onRuntime}${suite.seed === undefined ? ` --seed ${seed}` : ''}`,
      hooks: {
        onSignal: (suite, signal) =>
          process.stderr.write(`\n${signal}: stopping ${suite.name}, cleaning up…\n`),
        progress: () => progressPrinter(),
      },
      onRerunStart: (loaded, i) => {
        if (i === 0)
          process.stdout.write(
            `\n== ${shown(loaded.file)}: expected ${describeExpectation(expectationOf(loaded, target.name))}\n`,
          );
      },
      onRerun: (_loaded, i, r) =>
        process.stdout.write(
          `replay ${i + 1}/${o.runs}: ${r.verdict}${r.failed.length > 0 ? ` (${r.failed.join(', ')} failed)` : ''}` +
            ` — ${r.reproduced ? 'reproduced' : 'not reproduced'}` +
            (r.runError !== undefined ? `: ${r.runError}` : '') +
            (r.runDir !== undefined ? `  ${r.runDir}` : '') +
            '\n',
        ),
    });
    const measuredAt = new Date().toISOString();
    if (o.record)
      for (const f of report.files)
        if (f.runs > 0) {
          recordReplayRate(f.file, { target: f.target, reproduced: f.reproduced, runs: f.runs, measuredAt });
          process.stdout.write(`recorded ${f.reproduced}/${f.runs} on ${f.target} in ${shown(f.file)}\n`);
        }
    mkdirSync(o.out, { recursive: true });
    const json = join(o.out, 'replay.json');
    writeFileSync(json, JSON.stringify({ ...report, measuredAt, minRate: o.minRate / 100 }, null, 2) + '\n');
    process.stdout.write('\n' + replayTable(report.files, shown));
    process.stdout.write(`replay.json: ${json}\n`);
    const below = report.files.filter((f) => f.rate * 100 < o.minRate);
    for (const f of below)
      process.stdout.write(
        `below ${o.minRate}%: ${shown(f.file)} reproduced ${f.reproduced}/${f.runs} on ${f.target}\n`,
      );
    return below.length === 0 ? exitCodes.pass : exitCodes.fail;
  },
};
