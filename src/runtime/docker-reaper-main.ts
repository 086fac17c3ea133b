// The reaper process (see docker-reaper.ts): `node docker-reaper-main.js <parent-pid> <owner>`.
// Waits while its parent lives (bounded by a maximum lifetime), then force-removes every
// container labelled with the owner and exits. SIGTERM from the parent ends it at once.
import { dockerClient, LABEL_OWNER, removeContainersByLabel } from './docker-engine.js';
import { pidAlive } from '../util/pid-alive.js';

const POLL_MS = 500;
const MAX_LIFETIME_MS = 24 * 3600_000;
const REMOVE_ATTEMPTS = 3;

const [parentArg, owner] = process.argv.slice(2);
const parentPid = Number(parentArg);
if (!Number.isInteger(parentPid) || parentPid <= 0 || !owner) {
  process.stderr.write('usage: docker-reaper-main <parent-pid> <owner>\n');
  process.exit(2);
}
const originalPpid = process.ppid;
process.on('SIGTERM', () => process.exit(0));

function parentAlive(): boolean {
  // Reparenting tells a dead parent even if its PID was reused meanwhile.
  return process.ppid === originalPpid && pidAlive(parentPid);
}

const deadline = Date.now() + MAX_LIFETIME_MS;
while (parentAlive() && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, POLL_MS));
}
for (let attempt = 1; attempt <= REMOVE_ATTEMPTS; attempt++) {
  try {
    await removeContainersByLabel(await dockerClient(), { [LABEL_OWNER]: owner });
    break;
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
  }
}
process.exit(0);
