// limitHeapGrowth (launch/gc.ts): set at run time, V8's old generation stays near what it keeps
// alive; a process given its own --heap-growing-percent is left alone. capYoungGeneration: set
// at run time, the young generation stops growing at its cap; a process given its own
// young-generation flag is left alone.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { capYoungGeneration, limitHeapGrowth } from '../../src/launch/gc.js';

const gcModule = fileURLToPath(new URL('../../src/launch/gc.js', import.meta.url));

/** Runs an ES module program in a new Node process; the number it prints. */
function numberFromChild(program: string): number {
  return Number(
    execFileSync(process.execPath, ['--input-type=module', '-e', program], {
      encoding: 'utf8',
      timeout: 60_000,
    }),
  );
}

/**
 * Peak old-generation size (MiB) of a child making mid-lived garbage (batches that outlive a few
 * scavenges). The old space alone, which is what the limit acts on: heapTotal also counts the
 * young generation, which Node 24's V8 grows to ~130 MiB under this churn whatever the limit,
 * so in a CI run on Node 24 heapTotal read 298 limited against 345 MiB free (old space: ~140
 * against ~290).
 */
function peakHeapMiB(limit: 'none' | 'service' | 'runner'): number {
  const program = `
    import v8 from 'node:v8';
    const { limitHeapGrowth, limitRunnerHeapGrowth } = await import(${JSON.stringify(gcModule)});
    const oldSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size;
    if (${JSON.stringify(limit)} === 'service') limitHeapGrowth();
    if (${JSON.stringify(limit)} === 'runner') limitRunnerHeapGrowth();
    const live = []; let peak = 0;
    for (let round = 0; round < 150; round++) {
      const batch = []; for (let i = 0; i < 20000; i++) batch.push({ a: i, s: 'x'.repeat(20) + i });
      live.push(batch); if (live.length > 8) live.shift();
      await new Promise((r) => setImmediate(r));
      peak = Math.max(peak, oldSpace());
    }
    process.stdout.write(String(peak / 1048576));`;
  return numberFromChild(program);
}

test('limitHeapGrowth (services) and limitRunnerHeapGrowth keep the old generation near its live size', () => {
  const free = peakHeapMiB('none');
  // ~25 MiB live: V8's own growth took the old space to ~175 MiB here (Node 20; ~290 on
  // Node 24), limited ~75 (~140).
  for (const who of ['service', 'runner'] as const) {
    const limited = peakHeapMiB(who);
    assert.ok(
      limited < 0.8 * free,
      `${who}: peak old space ${limited.toFixed(0)} MiB limited vs ${free.toFixed(0)} MiB`,
    );
  }
});

test('a process started with its own --heap-growing-percent keeps it', () => {
  assert.equal(limitHeapGrowth(['--heap-growing-percent=50'], ''), false);
  assert.equal(limitHeapGrowth([], '--max-semi-space-size=4 --heap_growing_percent=50'), false);
});

/** The young generation's size (MiB, both semi-spaces) after a child's churn, capped or not. */
function youngMiB(capMiB: number | undefined): number {
  const program = `
    import v8 from 'node:v8';
    const { capYoungGeneration } = await import(${JSON.stringify(gcModule)});
    if (${capMiB !== undefined}) capYoungGeneration(${capMiB ?? 0});
    // Objects that live across a few scavenges make V8 grow its young generation.
    let keep = [];
    for (let round = 0; round < 400; round++) {
      for (let i = 0; i < 5000; i++) { keep.push({ a: i, b: 'x' + i }); if (keep.length > 20000) keep = []; }
      await new Promise((r) => setImmediate(r));
    }
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    process.stdout.write(String(young.space_size / 1048576));`;
  return numberFromChild(program);
}

test('capYoungGeneration stops the young generation growing at its cap', () => {
  const free = youngMiB(undefined);
  const capped = youngMiB(2);
  // V8 grew it to 32 MiB (2 × 16) here; capped at 2 MiB per semi-space: 4 (8 when two growths
  // come before one check).
  assert.ok(free >= 16, `uncapped young generation ${free} MiB`);
  assert.ok(capped <= 8, `capped young generation ${capped} MiB (uncapped ${free})`);
});

test('a process started with its own young-generation flag keeps it', () => {
  assert.equal(capYoungGeneration(4, ['--max-semi-space-size=8'], ''), false);
  assert.equal(capYoungGeneration(4, [], '--semi_space_growth_factor=2'), false);
});
