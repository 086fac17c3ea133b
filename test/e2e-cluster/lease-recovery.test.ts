// A leader whose lease ran out while the controller was gone must lead again once the
// controller is back and still names it (nobody else took over), e.g. after a kill -9 and
// restart of the log server (controller and metadata included). Before the fix the restarted
// controller's table kept naming a node that had stepped down, and every call hung.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { referenceTarget } from '../../src/targets/reference.js';
import type { StartedTarget } from '../../src/targets/target.js';
import { keysOnPartition } from '../helpers/keys.js';

async function add(url: string, key: string, timeoutMs: number): Promise<unknown> {
  const res = await fetch(`${url}/Counter/${key}/add`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ delta: 1 }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return res.json();
}

async function withTarget(body: (t: StartedTarget) => Promise<void>): Promise<void> {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-lease-'));
  try {
    await using t = await referenceTarget('rpc').start({ processors: 2, partitions: 2 }, { runDir });
    await body(t);
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
}

const keys = (prefix: string): string[] => [0, 1].map((p) => keysOnPartition('Counter', p, 2, 1, prefix)[0]!);

test(
  'kill -9 and restart of the log: the leaders lead again and calls are answered',
  { timeout: 120_000 },
  async () => {
    await withTarget(async (t) => {
      const url = t.ingressUrls[0]!;
      const ks = keys(`log-${Date.now()}-`);
      for (const k of ks) assert.equal(await add(url, k, 10_000), 1);
      const log = t.services.get('log')!;
      await log.kill();
      await new Promise((r) => setTimeout(r, 1200)); // past every processor's lease
      await log.restart();
      for (const k of ks) assert.equal(await add(url, k, 20_000), 2, `partition of ${k} serves again`);
    });
  },
);
