// `limbo soak [suite files or folders…]`: every suite (default `chaos`) on a target (default
// `reference`) for N seeds, a leak check after each run, and one table: runs, hung, lost,
// duplicated effects, leaks, false alarms, errors. Exit 0 when all of them are 0, 1 on
// any, 2 on bad usage. The runs themselves are `limbo run`'s (runSuite), run directories
// and all.
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadSuites } from '../runner/load-suites.js';
import { resolveTarget } from '../targets/registry.js';
import { formatHelp, parseOptions } from '../util/options.js';
import { randomSeed } from '../util/random.js';
import { runSoak, soakSeeds, soakTable } from '../soak/soak.js';
import { exitCodes, type Command } from './command.js';
import { chooseRuntime, dockerRunOptions } from './docker-options.js';
import { progressPrinter } from './progress.js';
import { runPrometheusChoice } from './run-prometheus-choice.js';
import {
  checkCoverageRuntime,
  coverageOption,
  planOption,
  runtimeOption,
  shardOption,
  targetOption,
  toxiproxyUrlOption,
} from './common-options.js';
import { parseShard, planLine, requireShardSeed, shardEntries, writeShardManifest } from '../runner/shard.js';
import type { SoakResult } from '../soak/soak.js';
import { commandSummaries } from './command-summaries.js';

/**
 * Default seeds: the 14 suites of chaos/ × 5 seeds ≈ 30 minutes on this machine (about 25 s a
 * run with its leak checks, measured in the 2026-12 soaks).
 */
export const DEFAULT_SOAK_SEEDS = 5;

const options = {
  target: targetOption,
  runtime: runtimeOption,
  seeds: {
    type: 'int',
    default: DEFAULT_SOAK_SEEDS,
    min: 1,
    max: 10_000,
    description: `seeds per suite (the default, ${DEFAULT_SOAK_SEEDS}, is about 30 minutes for chaos/ here)`,
  },
  seed: {
    type: 'int',
    min: 0,
    max: 4294967295,
    description: 'the first seed; the others follow it (default: random)',
  },
  out: { type: 'string', default: 'runs-soak', description: 'root of the run directories (and soak.json)' },
  toxiproxyUrl: toxiproxyUrlOption,
  coverage: coverageOption,
  settleMs: {
    type: 'int',
    default: 5000,
    min: 0,
    max: 120_000,
    description: 'after a run, how long to wait for its processes, ports and temp dirs to go',
  },
  fdSlack: {
    type: 'int',
    default: 8,
    min: 0,
    max: 10_000,
    description: 'extra open file descriptors of the runner tolerated after a run',
  },
  prometheus: {
    type: 'enum',
    values: ['auto', 'on', 'off'] as const,
    description:
      'one Prometheus per run, as for limbo run (on: required; auto: when installed) [default: auto when a suite has PromQL assertions, else off]',
  },
  shard: {
    ...shardOption,
    description: `${shardOption.description} (split by seed: every suite of a seed runs in one shard)`,
  },
  plan: planOption,
  ...dockerRunOptions,
} as const;

/** What a shard of `limbo soak` leaves in its manifest for `limbo merge`. */
export type SoakShardResult = Pick<SoakResult, 'runs' | 'overallLeaks' | 'skipped'> & {
  /** The suites in the order the soak table lists them. */
  suites: string[];
};

export const soakCommand: Command = {
  name: 'soak',
  summary: commandSummaries.soak,
  async run(argv, env) {
    const parsed = parseOptions(options, argv, env);
    if (parsed.help) {
      process.stdout.write(
        formatHelp('limbo soak [suite files or folders…] [options]', soakCommand.summary, options) +
          '\nLeaks checked after each run: processes of the runner still alive, listening ports they\n' +
          'hold, growth of the runner’s open fds, temp dirs left (runs get a private TMPDIR), toxics\n' +
          'left on --toxiproxy-url, containers left on --runtime docker. Exit 0 when every count is 0.\n',
      );
      return exitCodes.pass;
    }
    const o = parsed.options;
    const shard = o.shard !== undefined ? parseShard(o.shard) : undefined;
    requireShardSeed(shard, o.seed);
    const paths = parsed.positionals.length > 0 ? parsed.positionals : ['chaos'];
    const suites = await loadSuites(paths);
    checkCoverageRuntime(o.coverage, o.runtime);
    const runtime = await chooseRuntime(o.runtime, env, o, o.target);
    const target = await resolveTarget(o.target, runtime);
    const prometheus = runPrometheusChoice(
      o.prometheus,
      suites.map((s) => s.suite),
    );
    const base = o.seed ?? randomSeed();
    const allSeeds = soakSeeds(base, o.seeds);
    const entries = shardEntries(allSeeds, shard);
    const seeds = entries.map((e) => e.item);
    if (o.plan) {
      for (const { index, item } of entries)
        for (const s of suites)
          process.stdout.write(planLine(index, allSeeds.length, s.suite.name, item) + '\n');
      return exitCodes.pass;
    }
    const writeManifest = (result: SoakShardResult): void => {
      if (shard === undefined) return;
      const file = writeShardManifest(o.out, {
        command: 'soak',
        shard,
        seed: base,
        target: o.target,
        items: allSeeds.map(String),
        part: seeds.map(String),
        endedAt: new Date().toISOString(),
        result,
      });
      process.stdout.write(`shard ${shard.index}/${shard.count}: ${file} (limbo merge reads it)\n`);
    };
    if (seeds.length === 0) {
      process.stdout.write(`shard ${o.shard}: none of the ${allSeeds.length} seed(s) falls to this shard\n`);
      writeManifest({ runs: [], overallLeaks: [], skipped: [], suites: suites.map((s) => s.suite.name) });
      return exitCodes.pass;
    }
    process.stdout.write(
      `soak: ${suites.length} suite(s) × ${seeds.length} seed(s) on ${o.target} (${o.runtime}), seeds ${seeds[0]}…${seeds[seeds.length - 1]}\n`,
    );
    process.stdout.write(`prometheus ${prometheus.summary}\n`);
    let listContainers: (() => Promise<string[]>) | undefined;
    if (o.runtime === 'docker') {
      const { ensureReaper } = await import('../runtime/docker-reaper.js');
      const { dockerClient, listContainersByLabel, loadTestcontainers, LABEL_OWNER } =
        await import('../runtime/docker-engine.js');
      const owner = ensureReaper(runtime.env ?? env).owner;
      const client = await dockerClient();
      // What the runner keeps for its whole life is set up before the first run's baseline, as
      // the client is: testcontainers' session (its reaper lock file, once per process, in the
      // real TMPDIR rather than the soak's) is not something a run left behind.
      await (await loadTestcontainers()).getReaper(client);
      listContainers = () => listContainersByLabel(client, { [LABEL_OWNER]: owner });
    }
    let progress = progressPrinter();
    const result = await runSoak({
      suites,
      target,
      targetName: o.target,
      seeds,
      outRoot: o.out,
      ...(o.toxiproxyUrl !== undefined ? { toxiproxyUrl: o.toxiproxyUrl } : {}),
      ...(listContainers ? { listContainers } : {}),
      runOptions: { ...prometheus.runOptions, ...(o.coverage ? { coverage: true } : {}) },
      settleMs: o.settleMs,
      fdSlack: o.fdSlack,
      replayFlags: o.runtime === 'local' ? '' : ` --runtime ${o.runtime}`,
      onLine: (line) => {
        progress.done();
        process.stdout.write(line + '\n');
      },
      progress: (run) => {
        progress = progressPrinter();
        const printer = progress;
        return {
          onLog: printer.onLog,
          onProgress: (p) =>
            printer.onProgress({ ...p, suite: `[${run.index + 1}/${run.total}] ${p.suite}` }),
          done: printer.done,
        };
      },
      onSignal: (suite, signal) =>
        process.stderr.write(`\n${signal}: stopping the soak during ${suite.name}, cleaning up…\n`),
    });
    progress.done();
    process.stdout.write('\n' + soakTable(result));
    for (const l of result.overallLeaks) process.stdout.write(`over the whole soak: LEAK ${l.detail}\n`);
    try {
      writeFileSync(
        join(o.out, 'soak.json'),
        JSON.stringify({ seeds, target: o.target, ...result }, null, 2) + '\n',
      );
    } catch (err) {
      process.stderr.write(`could not write soak.json: ${String(err)}\n`);
    }
    writeManifest({
      runs: result.runs.map((r) =>
        r.runDir !== undefined ? { ...r, runDir: relative(o.out, r.runDir) } : r,
      ),
      overallLeaks: result.overallLeaks,
      skipped: result.skipped,
      suites: suites.map((s) => s.suite.name),
    });
    if (result.runs.length === 0) {
      process.stderr.write(
        `limbo soak: nothing ran: every suite given is skipped on ${o.target} (reasons above)\n`,
      );
      return exitCodes.usage;
    }
    process.stdout.write(result.ok ? 'soak: clean\n' : 'soak: NOT clean (see the runs above)\n');
    return result.ok ? exitCodes.pass : exitCodes.fail;
  },
};
