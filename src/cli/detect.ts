// `limbo detect`: detection power of the suites (src/detect/detect.ts). For each bug switch,
// runs the suites that claim it (none: a bounded limbo explore), prints the table (switch, caught by, seconds, evidence), the
// score and the false alarms of the same suites on plain reference; writes detection.json and
// detection.html. Exit 0 all must-catch switches caught and no false alarm, 1 otherwise, 2 bad usage.
import { join } from 'node:path';
import { detectionTable, runDetection, writeDetection } from '../detect/detect.js';
import { loadSuites } from '../runner/load-suites.js';
import { bugNames, parseBugs } from '../services/bugs.js';
import { UsageError } from '../util/errors.js';
import { formatHelp, parseOptions, type OptionSpecs } from '../util/options.js';
import { randomSeed } from '../util/random.js';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import {
  checkCoverageRuntime,
  coverageOption,
  outOption,
  planOption,
  runtimeOption,
  shardOption,
} from './common-options.js';
import { parseShard, planLine, requireShardSeed, shardEntries, writeShardManifest } from '../runner/shard.js';
import { chooseRuntime, dockerRunOptions } from './docker-options.js';
import { progressPrinter } from './progress.js';
import { runPrometheusChoice } from './run-prometheus-choice.js';
import { commandSummaries } from './command-summaries.js';

const options = {
  switches: { type: 'list', description: `bug switches to measure (default: all: ${bugNames.join(', ')})` },
  seed: { type: 'int', min: 0, max: 4294967295, description: 'the seed of every run (default: random)' },
  suites: { type: 'list', description: 'suite files or folders to draw from [default: chaos]' },
  exploreRuns: {
    type: 'int',
    default: 3,
    min: 0,
    max: 100,
    description: 'random schedules limbo explore tries on a switch no suite claims (0: report it missed)',
  },
  seedsPerSuite: {
    type: 'int',
    default: 3,
    min: 1,
    max: 20,
    description:
      'seeds each claiming suite gets (the seed, then the next ones, in rounds) before a switch counts as missed',
  },
  reference: {
    type: 'bool',
    default: true,
    description: 'also run the suites on plain reference (false alarms)',
  },
  coverage: coverageOption,
  prometheus: {
    type: 'enum',
    values: ['auto', 'on', 'off'] as const,
    description: 'a Prometheus per run, as for limbo run [default: auto when a suite has PromQL assertions]',
  },
  out: outOption,
  runtime: runtimeOption,
  shard: {
    ...shardOption,
    description: `${shardOption.description} (split by bug switch; each shard runs the suites its switches used on plain reference)`,
  },
  plan: planOption,
  ...dockerRunOptions,
} satisfies OptionSpecs;

export const detectCommand: Command = {
  name: 'detect',
  summary: commandSummaries.detect,
  async run(argv, env) {
    const parsed = parseOptions(options, argv, env);
    if (parsed.help) {
      process.stdout.write(formatHelp('limbo detect [options]', detectCommand.summary, options));
      return exitCodes.pass;
    }
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument ${parsed.positionals[0]}`);
    const o = parsed.options;
    const allSwitches = o.switches !== undefined ? [...parseBugs(o.switches, '--switches')] : [...bugNames];
    if (allSwitches.length === 0) throw new UsageError('--switches: name at least one switch');
    const shard = o.shard !== undefined ? parseShard(o.shard) : undefined;
    requireShardSeed(shard, o.seed);
    const entries = shardEntries(allSwitches, shard);
    const switches = entries.map((e) => e.item);
    const seed = o.seed ?? randomSeed();
    process.stdout.write(`seed ${seed}\n`);
    const suites = await loadSuites(o.suites ?? ['chaos']);
    if (o.plan) {
      for (const { index, item } of entries) {
        const claiming = suites.filter((s) => s.suite.catches.includes(item)).map((s) => s.suite.name);
        process.stdout.write(
          `${planLine(index, allSwitches.length, item, seed)} (${claiming.join(', ') || 'no suite claims it: explore'})\n`,
        );
      }
      return exitCodes.pass;
    }
    checkCoverageRuntime(o.coverage, o.runtime);
    const runtime = await chooseRuntime(o.runtime, env, o);
    const prometheus = runPrometheusChoice(
      o.prometheus,
      suites.map((s) => s.suite),
    );
    process.stdout.write(`prometheus ${prometheus.summary}\n`);
    const progress = progressPrinter();
    const report = await runDetection({
      suites,
      switches,
      seed,
      outRoot: o.out,
      runtime,
      reference: o.reference,
      exploreRuns: o.exploreRuns,
      seedsPerSuite: o.seedsPerSuite,
      runOptions: { ...prometheus.runOptions, ...(o.coverage ? { coverage: true } : {}) },
      onLine: (l) => process.stdout.write(l + '\n'),
      onLog: progress.onLog,
      onProgress: progress.onProgress,
      onRunDone: progress.done,
    });
    const files = writeDetection(report, join(o.out, `detection-${report.startedAt.replace(/[:]/g, '-')}`));
    process.stdout.write('\n' + detectionTable(report));
    process.stdout.write(`wrote ${files.json} and ${files.html}\nseed ${seed}\n`);
    if (shard !== undefined) {
      const file = writeShardManifest(o.out, {
        command: 'detect',
        shard,
        seed,
        target: 'reference',
        items: allSwitches,
        part: switches,
        endedAt: new Date().toISOString(),
        result: report,
      });
      process.stdout.write(`shard ${shard.index}/${shard.count}: ${file} (limbo merge reads it)\n`);
    }
    if (report.missedMustCatch.length > 0)
      process.stdout.write(`missed must-catch switch(es): ${report.missedMustCatch.join(', ')}\n`);
    for (const f of report.falseAlarms)
      process.stdout.write(`false alarm on reference: ${f.suite} (${f.failing.join(', ')})\n`);
    return report.missedMustCatch.length > 0 || report.falseAlarms.length > 0
      ? exitCodes.fail
      : exitCodes.pass;
  },
};
