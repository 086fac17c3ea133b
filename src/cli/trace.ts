// `limbo trace <invocation-id> [--run DIR]`: one invocation's spans as a terminal waterfall,
// read from a run directory (default: runs/latest), with overlapping fault windows marked.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import { formatHelp, parseOptions, type OptionSpecs } from '../util/options.js';
import { UsageError } from '../util/errors.js';
import { renderWaterfall, type FaultWindowLike } from '../report/waterfall.js';
import { readSpansJsonl, type RunSpan as SpanRecord } from '../run-data/spans.js';
import type { FaultWindow, PhaseTimes } from '../run-data/run-data.js';
import { commandSummaries } from './command-summaries.js';

const options = {
  run: { type: 'string', default: 'runs/latest', description: 'run directory to read', env: false },
} satisfies OptionSpecs;

export function readSpans(runDir: string): SpanRecord[] {
  const file = join(runDir, 'spans.jsonl');
  if (!existsSync(file)) throw new UsageError(`no spans.jsonl in ${runDir} (was the run traced?)`);
  return readSpansJsonl(file, Infinity);
}

/** Fault windows from faults.json (the runner's `{phases, windows}`), on the spans' epoch-ms clock. */
export function readFaultWindows(runDir: string): FaultWindowLike[] {
  const file = join(runDir, 'faults.json');
  if (!existsSync(file)) return [];
  const raw = JSON.parse(readFileSync(file, 'utf8')) as { phases?: PhaseTimes; windows?: FaultWindow[] };
  // faults.json times are ms since the run started; spans carry epoch ms.
  const base = raw.phases !== undefined ? Date.parse(raw.phases.startedAtWall) : 0;
  return (raw.windows ?? []).map((f) => ({
    fault: f.fault,
    target: f.target,
    startMs: base + f.injectedAtMs,
    ...(f.healedAtMs !== undefined ? { endMs: base + f.healedAtMs } : {}),
  }));
}

export const traceCommand: Command = {
  name: 'trace',
  summary: commandSummaries.trace,
  run(argv, env) {
    const parsed = parseOptions(options, argv, env);
    if (parsed.help) {
      process.stdout.write(
        formatHelp(
          'limbo trace <invocation-id> [--run DIR]',
          "Prints the invocation's spans (every service, every attempt) as a waterfall.",
          options,
        ),
      );
      return Promise.resolve(exitCodes.pass);
    }
    const [invocationId, ...extra] = parsed.positionals;
    if (invocationId === undefined) throw new UsageError('name the invocation id to trace');
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const runDir = resolve(parsed.options.run);
    if (!existsSync(runDir)) throw new UsageError(`no run directory ${runDir}`);
    const waterfall = renderWaterfall(invocationId, readSpans(runDir), readFaultWindows(runDir));
    if (waterfall.lines.length === 0)
      throw new UsageError(`no spans of invocation ${invocationId} in ${runDir}`);
    process.stdout.write(waterfall.lines.join('\n') + '\n');
    return Promise.resolve(exitCodes.pass);
  },
};
