// `limbo coverage <run dirs or folders…>`: merges the coverage.json of every run made with
// --coverage under the paths given and prints, per source file, the lines and branches the
// runs reached, then the branch arms none took, error paths first.
import { findCoverageFiles, formatCoverage, mergeCoverage } from '../coverage/map.js';
import { UsageError } from '../util/errors.js';
import { formatHelp, parseOptions } from '../util/options.js';
import { exitCodes, type Command } from './command.js';
import { commandSummaries } from './command-summaries.js';

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
    description: 'how many unreached branch arms to list',
  },
} as const;

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
      throw new UsageError(
        'name at least one run directory or folder of runs made with --coverage (e.g. runs)',
      );
    let files: string[];
    try {
      files = findCoverageFiles(parsed.positionals);
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    if (files.length === 0)
      throw new UsageError(
        `no coverage.json under ${parsed.positionals.join(', ')}: make the runs with --coverage (limbo run … --coverage)`,
      );
    const map = mergeCoverage(files);
    process.stdout.write(formatCoverage(map, parsed.options.under, files.length, parsed.options.unreached));
    return Promise.resolve(exitCodes.pass);
  },
};
