// A local service's stop: SIGTERM, then SIGKILL once its grace period runs out — 3 s unless the
// service says how long it drains (a declared service's stopGraceMs). Real child processes that
// take 1.5 s to exit on SIGTERM.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createCleanup } from '../../src/runtime/cleanup.js';
import { createLocalService } from '../../src/runtime/local.js';
import { startProcess } from '../../src/runtime/process.js';

/** Ready at once (listening for SIGTERM before it says so); on SIGTERM it drains for 1.5 s, then exits 0. */
const drainsOnTerm = [
  '-e',
  "process.on('SIGTERM', () => setTimeout(() => process.exit(0), 1500)); setInterval(() => {}, 1000); " +
    "setTimeout(() => console.log('limbo-ready ' + JSON.stringify({ role: 'slow', node: 'slow', addresses: {} })), 50);",
];

async function stopWith(stopGraceMs: number | undefined) {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-local-'));
  const cleanup = createCleanup();
  try {
    const svc = createLocalService(
      {
        name: 'drains',
        role: 'processor',
        ...(stopGraceMs !== undefined ? { stopGraceMs } : {}),
        start: (logFile, onSpawn) =>
          startProcess({ name: 'drains', command: process.execPath, args: drainsOnTerm, logFile, onSpawn }),
      },
      runDir,
      cleanup,
    );
    await svc.start();
    await svc.stop();
    return svc.lastStop?.();
  } finally {
    await cleanup.runAll();
    rmSync(runDir, { recursive: true, force: true });
  }
}

test("a stop waits the service's own grace period: killed past a short one, graceful within a long one", async () => {
  const short = await stopWith(500);
  assert.equal(short?.graceful, false, JSON.stringify(short));
  assert.equal(short?.graceMs, 500);
  const long = await stopWith(4000);
  assert.equal(long?.graceful, true, JSON.stringify(long));
  assert.equal(long?.graceMs, 4000);
  assert.ok((long?.ms ?? 0) >= 1400, JSON.stringify(long));
  // Without one, the default: 3 s, enough for this one.
  const byDefault = await stopWith(undefined);
  assert.equal(byDefault?.graceMs, 3000);
  assert.equal(byDefault?.graceful, true, JSON.stringify(byDefault));
});
