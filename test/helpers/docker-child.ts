// Run as a child process by test/docker/interrupt.test.ts: starts one container for the
// given run, prints `started <container-id> <reaper-pid>`, then waits to be killed (and
// exits by itself after a bound, so a lost child never lingers).
import { startContainerService } from '../../src/runtime/docker.js';
import { ensureReaper } from '../../src/runtime/docker-reaper.js';

const [runId, runDir] = process.argv.slice(2);
if (!runId || !runDir) throw new Error('usage: docker-child <run-id> <run-dir>');
const started = await startContainerService({
  name: 'log',
  role: 'log',
  args: ['--data-dir', '/tmp/limbo-log'],
  runDir,
  runId,
});
process.stdout.write(`started ${started.id} ${ensureReaper().pid}\n`);
setTimeout(() => process.exit(3), 120_000);
