// `limbo validate --target X`: checks a declared target without starting anything — its
// fields, templates, links, ports, leadership, signals, client module and API object, the
// commands on PATH (or the images it names, with --runtime docker) — and prints `ok: <summary>`
// (exit 0) or every problem, one line each naming the field (exit 2). The checks are the ones
// `limbo run` and `limbo up` make before they start (src/targets/declarative/validate.ts).
//
//   --target NAME | path ─▶ declarationFile ─▶ loadDeclaration (import + validate) ─▶ declarativeTarget (runtime)
//                                                  └ DeclarationError ─▶ one line a problem, exit 2
import { relative } from 'node:path';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import { formatHelp, parseOptions, type OptionSpecs } from '../util/options.js';
import { UsageError } from '../util/errors.js';
import { runtimeOption, targetOption } from './common-options.js';
import { commandSummaries } from './command-summaries.js';
import { isDeclaredTargetName, targetNames } from '../targets/registry.js';
import { declarationFile, loadDeclaration } from '../targets/declarative/load.js';
import { DeclarationError, describeDeclaration } from '../targets/declarative/validate.js';
import { declarativeTarget } from '../targets/declarative/target.js';

const options = {
  target: { type: 'string', description: `${targetOption.description} (required)` },
  runtime: {
    ...runtimeOption,
    description: 'the runtime it will run on: local needs every command, docker every image named',
  },
} satisfies OptionSpecs;

export const validateCommand: Command = {
  name: 'validate',
  summary: commandSummaries.validate,
  async run(argv, env) {
    const parsed = parseOptions(options, argv, env);
    if (parsed.help) {
      process.stdout.write(
        formatHelp(
          'limbo validate --target NAME|./targets/NAME.limbo.ts [--runtime local|docker]',
          `${validateCommand.summary}. Starts nothing. Prints "ok: <summary>" and exits 0, or every problem on its own line, naming the field, and exits 2.`,
          options,
        ),
      );
      return exitCodes.pass;
    }
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    const { target, runtime } = parsed.options;
    if (target === undefined) throw new UsageError('--target: name the declared target to validate');
    if (!isDeclaredTargetName(target)) {
      process.stdout.write(`ok: ${target} is built into limbo (nothing declared to validate)\n`);
      return exitCodes.pass;
    }
    const file = declarationFile(target);
    if (file === undefined)
      throw new UsageError(
        `--target ${target}: no targets/${target}.limbo.ts here or in limbo's checkout (built in: ${targetNames().join(', ')}; or give a path to a *.limbo.ts file)`,
      );
    try {
      const declared = await loadDeclaration(file, { checkCommands: runtime === 'local', env });
      // The runtime's own demands (a command for local, an image for docker), still starting nothing.
      declarativeTarget(declared, { name: runtime });
      process.stdout.write(
        `ok: ${relative(process.cwd(), file) || file}: ${describeDeclaration(declared, env)}\n`,
      );
      return exitCodes.pass;
    } catch (err) {
      if (!(err instanceof DeclarationError)) throw err;
      for (const problem of err.problems) process.stderr.write(`${err.where}: ${problem}\n`);
      return exitCodes.usage;
    }
  },
};
