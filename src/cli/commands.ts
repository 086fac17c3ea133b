// The command registry: one entry per `limbo <command>`, each loaded only when it runs (a
// `limbo serve` process — five of them per topology — loads the serve command and its role only,
// not the runner, the report and every other command).
import type { Command } from './command.js';
import { commandSummaries } from './command-summaries.js';

export interface CommandEntry {
  name: keyof typeof commandSummaries;
  summary: string;
  load(): Promise<Command>;
}

const entry = (name: CommandEntry['name'], load: () => Promise<Command>): CommandEntry => ({
  name,
  summary: commandSummaries[name],
  load,
});

export const commands: CommandEntry[] = [
  entry('run', async () => (await import('./run.js')).runCommand),
  entry('up', async () => (await import('./up.js')).upCommand),
  entry('validate', async () => (await import('./validate.js')).validateCommand),
  entry('trace', async () => (await import('./trace.js')).traceCommand),
  entry('explore', async () => (await import('./explore.js')).exploreCommand),
  entry('replay', async () => (await import('./replay.js')).replayCommand),
  entry('detect', async () => (await import('./detect.js')).detectCommand),
  entry('soak', async () => (await import('./soak.js')).soakCommand),
  entry('merge', async () => (await import('./merge.js')).mergeCommand),
  entry('coverage', async () => (await import('./coverage.js')).coverageCommand),
  entry('proxy', async () => (await import('./proxy.js')).proxyCommand),
  entry('serve', async () => (await import('./serve.js')).serveCommand),
];
