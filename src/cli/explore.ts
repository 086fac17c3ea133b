// `limbo explore`: random fault schedules against a target until one fails (or the runs or the
// budget run out); each failure is shrunk, confirmed and saved under seeds/ for `limbo run
// seeds/` to replay. Exit 0 when nothing failed, 1 when a failing schedule was saved.
import { relative } from 'node:path';
import { explore, plannedRun, type ExploreRun } from '../explore/explore.js';
import { describePlanned, exploreFaultKinds, type ExploreFaultKind } from '../explore/plan.js';
import {
  parseShard,
  planLine,
  requireShardSeed,
  shardEntries,
  writeShardManifest,
  type Shard,
} from '../runner/shard.js';
import { parseShrinkConfirm } from '../explore/shrink.js';
import { writeSeedFile } from '../runner/seed-file.js';
import { runSuiteOutcome } from '../runner/run-suite.js';
import { progressPrinter } from './progress.js';
import { createCleanup } from '../runtime/cleanup.js';
import { resolveTarget } from '../targets/registry.js';
import { parseDurationMs } from '../util/duration.js';
import { Corpus } from '../explore/guided.js';
import { UsageError } from '../util/errors.js';
import { formatHelp, parseOptions } from '../util/options.js';
import { randomSeed } from '../util/random.js';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import {
  coverageOption,
  outOption,
  planOption,
  shardOption,
  targetOption,
  toxiproxyUrlOption,
} from './common-options.js';
import { commandSummaries } from './command-summaries.js';

const allKinds: string[] = [...exploreFaultKinds];

const options = {
  target: targetOption,
  runs: { type: 'int', default: 5, min: 1, max: 10_000, description: 'random schedules to try' },
  budget: {
    type: 'string',
    default: '20m',
    description: 'stop starting new runs after this long (e.g. 10m)',
  },
  seed: { type: 'int', min: 0, max: 4294967295, description: 'the seed of the search (default: random)' },
  maxFaults: { type: 'int', default: 3, min: 1, max: 20, description: 'most faults in one schedule' },
  faults: {
    type: 'list',
    default: allKinds,
    description: `fault kinds to draw from (comma-separated): ${exploreFaultKinds.join(', ')}`,
  },
  chaos: { type: 'string', default: '10s', description: 'length of the chaos phase of each run' },
  converge: {
    type: 'string',
    default: '8s',
    description: 'bound on the wait for open ops after the final heal (and the hang bound)',
  },
  shrinkRuns: {
    type: 'int',
    default: 6,
    min: 0,
    max: 100,
    description: 'most re-runs spent shrinking a failure',
  },
  shrinkConfirm: {
    type: 'string',
    default: '1',
    description:
      'keep a smaller candidate only if it fails with the same check in K of K re-runs (K) or at least k of m (k/m); each candidate spends up to m of --shrink-runs',
  },
  confirmRuns: {
    type: 'int',
    default: 1,
    min: 0,
    max: 20,
    description: 're-runs of the shrunk schedule (one that passes makes the seed timing-dependent)',
  },
  parallel: {
    type: 'int',
    default: 1,
    min: 1,
    max: 8,
    description: 'schedules explored side by side, each on its own topology (same results as 1)',
  },
  seedsDir: { type: 'string', default: 'seeds', description: 'where failing schedules are saved' },
  out: outOption,
  toxiproxyUrl: toxiproxyUrlOption,
  coverage: coverageOption,
  guided: {
    type: 'bool',
    default: false,
    description:
      'coverage-guided: keep the schedules that reached new fault-space cells (and, with --coverage, new branches) in --corpus and derive new schedules from them as well as drawing fresh ones',
  },
  corpus: {
    type: 'string',
    default: 'corpus',
    description: 'where --guided keeps its corpus (read back by the next search)',
  },
  shard: {
    ...shardOption,
    description: `${shardOption.description} (split by schedule index of --runs; not with --guided)`,
  },
  plan: planOption,
} as const;

/** What a shard of `limbo explore` leaves in its manifest for `limbo merge`. */
export interface ExploreShardResult {
  /** Each schedule the shard ran, with its index in the unsharded search (0-based). */
  runs: (ExploreRun & { index: number })[];
  /** Seed files saved (relative to the working directory, as printed). */
  found: string[];
  stoppedBy: 'runs' | 'budget';
}

/** Schedule i's name in the list a shard splits. */
const runItem = (i: number): string => `run-${i + 1}`;

export const exploreCommand: Command = {
  name: 'explore',
  summary: commandSummaries.explore,
  async run(argv, env) {
    const parsed = parseOptions(options, argv, env);
    if (parsed.help) {
      process.stdout.write(formatHelp('limbo explore [options]', exploreCommand.summary, options));
      return exitCodes.pass;
    }
    if (parsed.positionals.length > 0)
      throw new UsageError(
        `limbo explore takes no positional arguments (got ${parsed.positionals.join(' ')})`,
      );
    const o = parsed.options;
    const shard: Shard | undefined = o.shard !== undefined ? parseShard(o.shard) : undefined;
    requireShardSeed(shard, o.seed);
    if (shard !== undefined && o.guided)
      throw new UsageError(
        '--shard cannot split a --guided search: each schedule depends on the corpus the runs before it built',
      );
    if (o.plan && o.guided)
      throw new UsageError('--plan cannot show a --guided search: its schedules depend on the runs');
    const target = await resolveTarget(o.target);
    if (!o.target.startsWith('reference') && target.shape === undefined)
      throw new UsageError(
        `limbo explore draws faults on the reference topology's links or a declared target's; target ${o.target} is not supported yet`,
      );
    const kinds = o.faults
      .map((k) => {
        if (!(exploreFaultKinds as readonly string[]).includes(k))
          throw new UsageError(
            `unknown fault kind ${k} for --faults (known: ${exploreFaultKinds.join(', ')})`,
          );
        return k as ExploreFaultKind;
      })
      // A declared target draws transfers only when it declares leadershipTransfer.
      .filter(
        (k) =>
          k !== 'transfer-leadership' || target.unsupported?.([{ kind: 'transferLeadership' }]) === undefined,
      );
    const shrinkConfirm = parseShrinkConfirm(o.shrinkConfirm);
    const chaosMs = parseDurationMs(o.chaos);
    if (chaosMs < 3000) throw new UsageError('--chaos must be at least 3s');
    const seed = o.seed ?? randomSeed();
    const indices = shardEntries(
      Array.from({ length: o.runs }, (_, i) => i),
      shard,
    ).map((e) => e.item);
    if (o.plan) {
      process.stdout.write(`seed ${seed}\n`);
      for (const i of indices) {
        const p = plannedRun(i, {
          seed,
          chaosMs,
          maxFaults: o.maxFaults,
          kinds,
          ...(target.shape !== undefined ? { shape: target.shape } : {}),
        });
        process.stdout.write(
          `${planLine(i, o.runs, runItem(i), p.seed)}: ${p.schedule.map(describePlanned).join('; ')}\n`,
        );
      }
      return exitCodes.pass;
    }
    process.stdout.write(
      `seed ${seed} (replay the whole search: npx limbo explore --target ${o.target} --seed ${seed} --runs ${o.runs}${shard !== undefined ? ` --shard ${shard.index}/${shard.count}` : ''})\n`,
    );
    // One Ctrl-C handler for the whole search: it stops every slot's run, then exits.
    const search = createCleanup();
    const uninstall = search.installSignalHandlers((signal) =>
      process.stderr.write(`\n${signal}: stopping the exploration, cleaning up…\n`),
    );
    let guide: Corpus | undefined;
    if (o.guided) {
      try {
        guide = new Corpus(o.corpus);
      } catch (err) {
        throw new UsageError(err instanceof Error ? err.message : String(err));
      }
      process.stdout.write(
        `guided by ${o.coverage ? 'branches and ' : ''}fault-space cells; corpus ${o.corpus} (${guide.entries.length} schedule(s) to start from)\n`,
      );
    }
    const result = await explore({
      targetName: target.name,
      seed,
      runs: o.runs,
      budgetMs: parseDurationMs(o.budget),
      maxFaults: o.maxFaults,
      kinds,
      ...(target.shape !== undefined ? { shape: target.shape } : {}),
      chaosMs,
      convergeMs: parseDurationMs(o.converge),
      shrinkRuns: o.shrinkRuns,
      shrinkConfirm,
      confirmRuns: o.confirmRuns,
      write: (line) => process.stdout.write(line + '\n'),
      save: (s) => relative(process.cwd(), writeSeedFile(o.seedsDir, s)) || o.seedsDir,
      parallel: o.parallel,
      ...(shard !== undefined ? { shard } : {}),
      ...(guide !== undefined ? { guide } : {}),
      runOne: async (suite, runSeed, slot) => {
        const cleanup = createCleanup();
        const unregister = search.add(`run ${suite.name}`, () => cleanup.runAll());
        const progress = progressPrinter(process.stderr, 5000, o.parallel > 1 ? `[slot ${slot + 1}] ` : '');
        try {
          return await runSuiteOutcome(suite, {
            target,
            seed: runSeed,
            outRoot: o.out,
            replay: `npx limbo explore --target ${o.target} --seed ${seed}`,
            cleanup,
            ...(o.toxiproxyUrl !== undefined ? { toxiproxyUrl: o.toxiproxyUrl } : {}),
            onLog: progress.onLog,
            onProgress: progress.onProgress,
            ...(o.coverage ? { coverage: true } : {}),
          });
        } finally {
          progress.done();
          unregister();
          await cleanup.runAll();
        }
      },
    });
    uninstall();
    const failing = result.runs.filter((r) => r.failed.length > 0).length;
    process.stdout.write(
      `\nexplored ${result.runs.length} schedule(s)${result.stoppedBy === 'budget' ? ' (budget ran out)' : ''}: ${failing} failed\n`,
    );
    if (result.reached !== undefined)
      process.stdout.write(
        `reached ${result.reached.branches} branch arm(s) and ${result.reached.cells} fault-space cell(s); corpus ${result.reached.corpus} schedule(s) in ${o.corpus}\n`,
      );
    for (const f of result.found)
      process.stdout.write(`  saved ${f} — replay: npx limbo run ${f} --target ${o.target}\n`);
    if (result.found.length > 0 && o.target === 'reference')
      process.stdout.write(
        '  a failure on reference is a bug in the reference cluster: CI replays seeds/ and stays red until it is fixed\n',
      );
    if (shard !== undefined) {
      // The runs come back in schedule order, the first of the shard's indices (all of them
      // unless the budget ran out).
      const shardResult: ExploreShardResult = {
        runs: result.runs.map((r, j) => ({ ...r, index: indices[j]!, runDir: relative(o.out, r.runDir) })),
        found: result.found,
        stoppedBy: result.stoppedBy,
      };
      const file = writeShardManifest(o.out, {
        command: 'explore',
        shard,
        seed,
        target: o.target,
        items: Array.from({ length: o.runs }, (_, i) => runItem(i)),
        part: indices.map(runItem),
        endedAt: new Date().toISOString(),
        result: shardResult,
      });
      process.stdout.write(`shard ${shard.index}/${shard.count}: ${file} (limbo merge reads it)\n`);
    }
    return result.found.length > 0 ? exitCodes.fail : exitCodes.pass;
  },
};
