// `limbo trace <invocation-id> [--run DIR]`: one invocation's spans as a terminal waterfall,
// read from a run directory (default: runs/latest), with overlapping fault windows marked.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from './command.js';
import { exitCodes } from './command.js';
import { formatHelp, parseOptions, type OptionSpecs } from '../util/options.js';
import { UsageError } from '../util/errors.js';
import { renderWaterfall, type FaultWindowLike } from '../report/waterfall.js';
import type { SpanRecord } from '../telemetry/otlp-receiver.js';

const options = {
  run: { type: 'string', default: 'runs/latest', description: 'run directory to read', env: false },
} satisfies OptionSpecs;

export function readSpans(runDir: string): SpanRecord[] {
  const file = join(runDir, 'spans.jsonl');
  if (!existsSync(file)) throw new UsageError(`no spans.jsonl in ${runDir} (was the run traced?)`);
  const spans: SpanRecord[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      spans.push(JSON.parse(line) as SpanRecord);
    } catch {
      // a torn last line of an interrupted run: skip it
    }
  }
  return spans;
}

/** Fault windows from faults.json, tolerant of field names (startMs/injectedAtMs, endMs/healedAtMs). */
export function readFaultWindows(runDir: string): FaultWindowLike[] {
  const file = join(runDir, 'faults.json');
  if (!existsSync(file)) return [];
  const raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  const list = Array.isArray(raw) ? raw : ((raw as { windows?: unknown[] }).windows ?? []);
  // faults.json times are ms since the run started; spans carry epoch ms.
  const startedAtWall = (raw as { phases?: { startedAtWall?: string } }).phases?.startedAtWall;
  const base = startedAtWall !== undefined ? Date.parse(startedAtWall) : 0;
  return list.map((f) => {
    const o = f as Record<string, unknown>;
    const num = (...keys: string[]): number | undefined => {
      for (const k of keys) if (typeof o[k] === 'number') return o[k];
      return undefined;
    };
    const str = (...keys: string[]): string | undefined => {
      for (const k of keys) if (typeof o[k] === 'string') return o[k];
      return undefined;
    };
    const endMs = num('endMs', 'healedAtMs', 'healedAt');
    return {
      fault: str('fault', 'name') ?? 'fault',
      target: str('target') ?? '',
      startMs: base + (num('startMs', 'injectedAtMs', 'injectedAt') ?? 0),
      ...(endMs !== undefined ? { endMs: base + endMs } : {}),
    };
  });
}

export const traceCommand: Command = {
  name: 'trace',
  summary: "show one invocation's spans as a waterfall",
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
