// `limbo <command> …` from the tsc output, module by module (what the services run when their
// bundle is missing or stale, and what tests start); bin/limbo.js goes through entry.ts.
import './compile-cache.js'; // first: the commands' modules load after it
import { runLimbo } from './cli.js';

runLimbo(process.argv.slice(2));
