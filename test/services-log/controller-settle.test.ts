// The first leaders at start-up: the controller waits the settle after the first heartbeat,
// so that processors started together share the partitions — unless it was told how many
// to expect, in which case it picks as soon as they have all sent one. A controller with a
// metadata store on disk and a clock the test moves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Controller } from '../../src/services/log/controller.js';
import { MetadataStore } from '../../src/services/log/metadata-store.js';
import { silentLogger } from '../../src/telemetry/logger.js';
import { tempDir } from './log-harness.js';

async function startAt(
  expectNodes: number,
): Promise<{ controller: Controller; clock: { ms: number } } & AsyncDisposable> {
  const dir = tempDir();
  const metadata = await MetadataStore.open(dir.path, 4);
  const clock = { ms: 1000 };
  const controller = new Controller({
    numPartitions: 4,
    failureTimeoutMs: 1500,
    metadata,
    logger: silentLogger,
    startupSettleMs: 300,
    expectNodes,
    now: () => clock.ms,
  });
  return {
    controller,
    clock,
    [Symbol.asyncDispose]: async () => {
      await controller.stop();
      await metadata.drain();
      dir[Symbol.dispose]();
    },
  };
}

const beat = (c: Controller, node: string) => c.heartbeat({ node, address: `${node}:1`, partitions: [] });
const leaders = (c: Controller): string[] => c.currentTable().partitions.map((p) => p.leaderNode);

test('with the processors expected: leaders once all have sent a heartbeat, shared between them', async () => {
  await using s = await startAt(3);
  await beat(s.controller, 'p-1');
  s.clock.ms += 5;
  await beat(s.controller, 'p-2');
  assert.deepEqual(
    leaders(s.controller).filter((l) => l !== ''),
    [],
    'two of three: still settling',
  );
  s.clock.ms += 5;
  await beat(s.controller, 'p-3');
  const l = leaders(s.controller);
  assert.equal(l.length, 4);
  assert.ok(
    l.every((x) => x !== ''),
    `every partition led 10 ms after the first heartbeat: ${l.join(',')}`,
  );
  assert.equal(new Set(l).size, 3, 'shared among the three');
});

test('without an expected count, or with fewer than expected: the settle is waited out', async () => {
  for (const expected of [0, 4]) {
    await using s = await startAt(expected);
    for (const n of ['p-1', 'p-2', 'p-3']) await beat(s.controller, n);
    s.clock.ms += 299;
    await beat(s.controller, 'p-1');
    assert.ok(
      leaders(s.controller).every((x) => x === ''),
      `expected ${expected}: no leader before 300 ms`,
    );
    s.clock.ms += 1;
    await beat(s.controller, 'p-2');
    assert.ok(
      leaders(s.controller).every((x) => x !== ''),
      `expected ${expected}: leaders at 300 ms`,
    );
    assert.equal(new Set(leaders(s.controller)).size, 3);
  }
});
