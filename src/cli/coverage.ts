// `limbo coverage <run dirs or folders…>`: merges the coverage.json of every run made with
// --coverage under the paths given and prints, per source file, the lines and branches the
// runs reached, then the branch arms none took, error paths first; then, for runs on any
// target, the fault space they covered (fault-space.json: fault × what it struck × phase).
import { faultSpaceFile, formatFaultSpace, readFaultSpace } from '../coverage/fault-space.js';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { packageRoot } from '../coverage/collect.js';
import { findCoverageFiles, findRunFiles, judgeCoverage, mergeCoverage } from '../coverage/map.js';
import { readReasons, type BranchReason } from '../coverage/reasons.js';
import { UsageError } from '../util/errors.js';
import { formatHelp, parseOptions } from '../util/options.js';
import { exitCodes, type Command } from './command.js';
import { commandSummaries } from './command-summaries.js';

/** Where the repository keeps the reasons for the reference cluster's unreached arms. */
const DEFAULT_REASONS = 'docs/coverage-reasons.txt';

const options = {
  under: {
    type: 'string',
    default: 'src/services/',
    description: 'the files to show: those whose path (from the package root) starts with this',
  },
  unreached: {
    type: 'int',
    min: 0,
    max: 100000,
    default: 40,
    description: 'how many unreached branch arms without a reason to list',
  },
  reasons: {
    type: 'string',
    description: `the file giving why an unreached branch arm cannot be reached in a test, one line an arm (default: ${DEFAULT_REASONS} when it exists; 'none' to read none)`,
  },
  goal: {
    type: 'int',
    min: 0,
    max: 100,
    description:
      'exit 1 unless at least this percent of branches was reached and every unreached arm has a reason (none stale)',
  },
  'reason-lines': {
    type: 'bool',
    default: false,
    description: 'list the unexplained arms as lines of the reasons file, each to finish with its reason',
  },
} as const;

/** The reasons file to read: the one named, none for 'none', else the repository's when present. */
function chooseReasons(named: string | undefined): string | undefined {
  if (named === 'none') return undefined;
  if (named !== undefined) {
    if (!existsSync(named)) throw new UsageError(`--reasons: no such file: ${named}`);
    return named;
  }
  const repository = join(packageRoot, DEFAULT_REASONS);
  return existsSync(repository) ? repository : undefined;
}

export const coverageCommand: Command = {
  name: 'coverage',
  summary: commandSummaries.coverage,
  run(argv, env) {
    const parsed = parseOptions(options, argv, env);
    if (parsed.help) {
      process.stdout.write(
        formatHelp(
          'limbo coverage <run directories or folders of them…> [options]',
          coverageCommand.summary,
          options,
        ),
      );
      return Promise.resolve(exitCodes.pass);
    }
    if (parsed.positionals.length === 0)
      throw new UsageError('name at least one run directory or a folder of runs (e.g. runs)');
    let files: string[];
    let spaces: string[];
    try {
      files = findCoverageFiles(parsed.positionals);
      spaces = findRunFiles(parsed.positionals, faultSpaceFile);
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    if (files.length === 0 && spaces.length === 0)
      throw new UsageError(
        `no runs under ${parsed.positionals.join(', ')} (no coverage.json or ${faultSpaceFile}): name run directories or the --out of limbo run`,
      );
    const reasonsPath = chooseReasons(parsed.options.reasons);
    let reasons: BranchReason[] | undefined;
    try {
      reasons = reasonsPath === undefined ? undefined : readReasons(reasonsPath);
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message.split('\n')[0]! : String(err));
    }
    let code: string;
    let goalMet = true;
    let faultSpace: string | undefined;
    try {
      if (files.length > 0) {
        const judged = judgeCoverage(
          mergeCoverage(files),
          parsed.options.under,
          files.length,
          parsed.options.unreached,
          {
            ...(reasons !== undefined ? { reasons } : {}),
            ...(reasonsPath !== undefined
              ? { reasonsFile: relative(process.cwd(), reasonsPath) || reasonsPath }
              : {}),
            ...(parsed.options.goal !== undefined ? { goalPct: parsed.options.goal } : {}),
            reasonLines: parsed.options['reason-lines'],
          },
        );
        code = judged.text;
        goalMet = judged.goal?.met ?? true;
      } else {
        if (parsed.options.goal !== undefined)
          throw new Error(
            `--goal needs code coverage: no coverage.json under ${parsed.positionals.join(', ')}`,
          );
        code =
          'no code coverage in these runs (make them with --coverage, on a reference target, for the table of lines and branches)\n';
      }
      if (spaces.length > 0) faultSpace = formatFaultSpace(spaces.map(readFaultSpace));
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    process.stdout.write(code);
    if (faultSpace !== undefined) process.stdout.write('\n' + faultSpace);
    return Promise.resolve(goalMet ? exitCodes.pass : exitCodes.fail);
  },
};
