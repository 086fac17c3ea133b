// topology.ingressMaxPending reaches the reference ingress as --max-pending: on a real
// reference target whose ingress holds at most 2 pending requests, 8 slow calls at once are
// partly refused with 503 and retry-after, and limbo_ingress_refused_total{limit="max_pending"}
// counts each; without the option the same calls are all served. A bad value is refused
// before anything starts, naming the field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTarget } from '../../src/targets/registry.js';
import type { Topology } from '../../src/targets/target.js';
import { scrape, sumSamples } from '../../src/telemetry/prom-text.js';
import { UsageError } from '../../src/util/errors.js';

const CALLS = 8;

async function slowCalls(topology: Topology): Promise<{ statuses: number[]; refused: number }> {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-max-pending-'));
  try {
    await using target = await createTarget('reference').start(topology, { runDir });
    const url = target.ingressUrls[0]!;
    // Bounded: each call sleeps 1.5 s, and the client waits at most 20 s for every answer.
    const statuses = await Promise.all(
      Array.from({ length: CALLS }, () =>
        fetch(`${url}/Sleep/sleep`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ms: 1500 }),
          signal: AbortSignal.timeout(20_000),
        }).then(async (r) => {
          await r.arrayBuffer();
          if (r.status === 503) assert.equal(r.headers.get('retry-after'), '1');
          return r.status;
        }),
      ),
    );
    const metricsUrl = target.services.get('ingress-1')?.metricsUrl();
    assert.ok(metricsUrl !== undefined, 'the ingress serves metrics');
    const samples = await scrape(metricsUrl);
    const refused = sumSamples(samples, 'limbo_ingress_refused_total', { limit: 'max_pending' });
    return { statuses, refused };
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
}

test('topology.ingressMaxPending bounds the reference ingress: the excess is refused and counted', async () => {
  const bounded = await slowCalls({ processors: 1, partitions: 1, ingressMaxPending: 2 });
  const refused = bounded.statuses.filter((s) => s === 503).length;
  assert.ok(refused >= 1, `some calls refused: ${bounded.statuses.join(' ')}`);
  assert.equal(refused + bounded.statuses.filter((s) => s === 200).length, CALLS);
  assert.equal(bounded.refused, refused, 'refused_total counts each refusal');

  const unbounded = await slowCalls({ processors: 1, partitions: 1 });
  assert.deepEqual(unbounded.statuses, Array<number>(CALLS).fill(200));
  assert.equal(unbounded.refused, 0);
});

test('a bad topology.ingressMaxPending is refused before anything starts, naming the field', async () => {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-max-pending-'));
  try {
    for (const bad of [0, 1.5, -3])
      await assert.rejects(
        async () =>
          createTarget('reference').start(
            { processors: 1, partitions: 1, ingressMaxPending: bad },
            { runDir },
          ),
        (e: unknown) => e instanceof UsageError && /topology\.ingressMaxPending/.test(e.message),
      );
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
});
