// The command registry: one entry per `limbo <command>`.
import type { Command } from './command.js';
import { detectCommand } from './detect.js';
import { exploreCommand } from './explore.js';
import { proxyCommand } from './proxy.js';
import { runCommand } from './run.js';
import { serveCommand } from './serve.js';
import { soakCommand } from './soak.js';
import { traceCommand } from './trace.js';
import { upCommand } from './up.js';

export const commands: Command[] = [
  runCommand,
  upCommand,
  traceCommand,
  exploreCommand,
  detectCommand,
  soakCommand,
  proxyCommand,
  serveCommand,
];
