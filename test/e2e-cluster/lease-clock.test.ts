// A processor's lease is timed on a steady clock: a wall clock set back (an NTP step, a VM
// resumed from a snapshot) must not stretch it. Here each processor's wall clock goes back an
// hour just after the controller stopped answering (its process is stopped), inside the
// lease: every leader must still step down within a few leases. Before the fix the lease
// compared Date.now() readings, so a leader cut off from the controller kept leading for the
// hour the clock went back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TestCluster } from '../helpers/cluster.js';

/** Node preload: in a processor only, Date.now reads an hour behind once `marker` exists. */
function clockStepPreload(dir: string, marker: string): string {
  const file = join(dir, 'clock-step.mjs');
  writeFileSync(
    file,
    `import { existsSync } from 'node:fs';
if (process.argv.includes('processor')) {
  const wall = Date.now;
  let stepped = false;
  Date.now = () => (stepped ||= existsSync(${JSON.stringify(marker)})) ? wall() - 3_600_000 : wall();
}
`,
  );
  return pathToFileURL(file).href;
}

test('a wall clock set back an hour does not stretch a processor lease', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-lease-clock-'));
  const marker = join(dir, 'step-now');
  try {
    await using cluster = await TestCluster.start({
      processors: 3,
      partitions: 2,
      env: { ...process.env, LIMBO_SERVICE_NODE_ARGS: `--import=${clockStepPreload(dir, marker)}` },
    });
    await cluster.waitForLeaders();
    assert.equal((await cluster.leadingPartitions()).size, 2, 'both partitions led before the step');
    const log = cluster.log;
    process.kill(log.pid, 'SIGSTOP');
    try {
      // The step comes between the last heartbeat answered and the lease running out.
      writeFileSync(marker, '');
      // Lease 500 ms (processor default); bounded at 10 s.
      const t0 = performance.now();
      let leading = await cluster.leadingPartitions();
      while (leading.size > 0 && performance.now() - t0 < 10_000) {
        await new Promise((r) => setTimeout(r, 100));
        leading = await cluster.leadingPartitions();
      }
      assert.equal(
        leading.size,
        0,
        `still leading 10 s after the controller stopped answering: ${[...leading].join(', ')}`,
      );
      assert.ok(performance.now() - t0 < 5000, 'stepped down within a few leases');
    } finally {
      process.kill(log.pid, 'SIGCONT');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
