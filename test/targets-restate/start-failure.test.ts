// A start-up that cannot finish in time (the bound is far below Restate's ~10 s to first
// leaders) fails with a TimeoutError and leaves nothing behind: no process, no data dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRestateCluster } from '../../src/targets/restate/cluster.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { LimboError } from '../../src/util/errors.js';
import { pidAlive } from '../helpers/restate.js';

test('a start-up that times out stops every process it started and removes the data dir', async () => {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-restate-fail-'));
  const fields: Record<string, unknown>[] = [];
  const logger = createLogger('test', {
    write: (line) => {
      const json = line.indexOf(' {');
      if (json >= 0) fields.push(JSON.parse(line.slice(json + 1)) as Record<string, unknown>);
    },
  });
  try {
    await assert.rejects(
      startRestateCluster({ runDir, partitions: 4, readyTimeoutMs: 2500, logger }),
      (err) => err instanceof LimboError && err.code === 'E_TIMEOUT',
    );
    const pids = fields.map((f) => f['pid']).filter((p): p is number => typeof p === 'number');
    assert.equal(pids.length, 4, 'three nodes and the service endpoint had started');
    assert.deepEqual(
      pids.filter((p) => pidAlive(p)),
      [],
    );
    const dataDir = fields.map((f) => f['dataDir']).find((d): d is string => typeof d === 'string');
    assert.ok(dataDir !== undefined);
    assert.equal(existsSync(dataDir), false);
    assert.ok(existsSync(join(runDir, 'logs', 'restate-n1.log')));
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
});
