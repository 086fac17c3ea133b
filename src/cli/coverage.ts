// `limbo coverage <run dirs or folders…>`: merges the coverage.json of every run made with
// --coverage under the paths given and prints, per source file, the lines and branches the
// runs reached, then the branch arms none took, error paths first; then, for runs on any
// target, the fault space they covered (fault-space.json: fault × what it struck × phase).
import { faultSpaceFile, formatFaultSpace, readFaultSpace } from '../coverage/fault-space.js';
import { findCoverageFiles, findRunFiles, formatCoverage, mergeCoverage } from '../coverage/map.js';
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
    let code: string;
    let faultSpace: string | undefined;
    try {
      code =
        files.length > 0
          ? formatCoverage(mergeCoverage(files), parsed.options.under, files.length, parsed.options.unreached)
          : 'no code coverage in these runs (make them with --coverage, on a reference target, for the table of lines and branches)\n';
      if (spaces.length > 0) faultSpace = formatFaultSpace(spaces.map(readFaultSpace));
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    process.stdout.write(code);
    if (faultSpace !== undefined) process.stdout.write('\n' + faultSpace);
    return Promise.resolve(exitCodes.pass);
  },
};
