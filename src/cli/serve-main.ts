// `limbo serve <role> …` alone: the entry point of the service processes a run starts. It is
// what scripts/bundle-services.mjs bundles (with the modules it loads) into one file, which
// a service loads in about half the time of the ~300 files behind it; serve-launch.ts runs
// that file from cached bytecode (runtime/process.ts starts it while the bundle is current).
// Same arguments, output and exit codes as `limbo serve`.
import { exitWith, runCommand } from './run-command.js';
import { serveCommand } from './serve.js';
import { UsageError } from '../util/errors.js';
import { limitHeapGrowth } from '../launch/gc.js';

limitHeapGrowth();
const [name, ...rest] = process.argv.slice(2);
exitWith(
  runCommand(
    'serve',
    () =>
      name === 'serve'
        ? Promise.resolve(serveCommand)
        : Promise.reject(new UsageError(`this entry point runs only "serve" (got "${name ?? ''}")`)),
    rest,
  ),
);
