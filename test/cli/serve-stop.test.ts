// `limbo serve` listens for its stop signal before it prints the ready line: a parent that
// sends SIGTERM the moment it reads that line gets a clean stop (exit 0), never a process
// ended by the signal's default action (no graceful stop, spans and counts lost). Before the
// order was fixed about one start in five ended that way on this machine.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startLimboService } from '../../src/runtime/process.js';

test('a service stopped the moment it is ready stops cleanly, every time', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-serve-stop-'));
  try {
    const exits: (number | string)[] = [];
    for (let i = 0; i < 15; i++) {
      const log = await startLimboService(
        'log',
        ['--port', '0', '--metrics-port', '0', '--data-dir', join(dir, `data-${i}`)],
        { name: 'log', readyTimeoutMs: 20_000 },
      );
      await log.stop();
      exits.push(await log.exited);
    }
    assert.deepEqual(
      exits,
      Array.from({ length: 15 }, () => 0),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
