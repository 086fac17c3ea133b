// The command registry: one entry per `limbo <command>`.
import type { Command } from './command.js';
import { runCommand } from './run.js';
import { serveCommand } from './serve.js';

export const commands: Command[] = [serveCommand, runCommand];
