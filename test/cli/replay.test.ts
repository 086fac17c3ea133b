// `limbo replay` for real: a seed that reliably fails on reference:legacy (a processor restart
// the legacy protocol leaves calls hanging after, shortened to a 5 s chaos phase) reproduces on
// every rerun there, with the failing checks named, and --record writes the rate the loader
// reads back; on the fixed protocol it never reproduces (the verdict differs). Bad input exits 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exploreTopology, exploreWorkload } from '../../src/explore/explore.js';
import type { ReplayReport } from '../../src/explore/replay.js';
import { loadSuites } from '../../src/runner/load-suites.js';
import type { SeedFile } from '../../src/runner/seed-file.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

function limbo(
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'limbo.js'), ...args], { cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGINT'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const restartSeed: SeedFile = {
  kind: 'limbo-seed',
  version: 1,
  name: 'replay-test-restart',
  why: 'a processor restart the legacy protocol leaves calls hanging after',
  foundOn: 'reference:legacy',
  foundAt: new Date(0).toISOString(),
  seed: 2536419953,
  topology: exploreTopology,
  workload: exploreWorkload,
  chaosMs: 5000,
  convergeMs: 4000,
  schedule: [{ atMs: 3000, forMs: 500, fault: 'restart', params: { on: 'processor-1' } }],
  expect: [
    { name: 'noClientLeftHanging', options: { withinMsAfterHeal: 4000 } },
    { name: 'pendingDrains' },
    { name: 'exactlyOnce' },
    { name: 'idempotentRetriesAgree' },
  ],
  failed: ['noClientLeftHanging', 'pendingDrains'],
  expectedToFailOn: ['reference:legacy'],
  timingDependentOn: [],
};

test(
  'a reliably failing seed reproduces 2/2 on reference:legacy (recorded), 0/2 on reference',
  { timeout: 300_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'limbo-replay-'));
    try {
      const file = join(dir, 'replay-test-restart.json');
      writeFileSync(file, JSON.stringify(restartSeed, null, 2) + '\n');
      const legacyOut = join(dir, 'legacy');
      const legacy = await limbo(
        ['replay', file, '--runs', '2', '--target', 'reference:legacy', '--out', legacyOut, '--record'],
        150_000,
      );
      const log = `${legacy.stdout}\n${legacy.stderr}`;
      assert.equal(legacy.code, 0, log);
      assert.match(legacy.stdout, /replay 1\/2: fail \(noClientLeftHanging, pendingDrains.* — reproduced/);
      assert.match(legacy.stdout, /replay 2\/2: fail .* — reproduced/);
      assert.match(legacy.stdout, /fail \(noClientLeftHanging, pendingDrains\)\s+2\/2\s+100%\s+fail ×2/);
      const report = JSON.parse(readFileSync(join(legacyOut, 'replay.json'), 'utf8')) as ReplayReport;
      const [only] = report.files;
      assert.equal(only?.reproduced, 2);
      assert.equal(only?.runs, 2);
      assert.deepEqual(only?.expected.failed, ['noClientLeftHanging', 'pendingDrains']);
      assert.ok(only?.reruns.every((r) => r.failed.includes('noClientLeftHanging')));
      // --record: the loader reads the rate back, and the seed still loads as the same suite.
      const [loaded] = await loadSuites([file]);
      assert.equal(loaded?.suite.seed, restartSeed.seed);
      assert.deepEqual(
        loaded?.seedFile?.replayRates?.map((r) => [r.target, r.reproduced, r.runs]),
        [['reference:legacy', 2, 2]],
      );

      const fixed = await limbo(
        ['replay', file, '--runs', '2', '--target', 'reference', '--out', join(dir, 'fixed')],
        150_000,
      );
      assert.equal(fixed.code, 1, `below --min-rate exits 1\n${fixed.stdout}\n${fixed.stderr}`);
      assert.match(fixed.stdout, /replay 1\/2: pass — not reproduced/);
      assert.match(fixed.stdout, /0\/2\s+0%\s+pass ×2/);
      assert.match(fixed.stdout, /below 95%: .*replay-test-restart\.json reproduced 0\/2 on reference/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('limbo replay: bad input exits 2 with one line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-replay-'));
  try {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{not json');
    const cases: [string[], RegExp][] = [
      [[], /name at least one seed or suite file/],
      [[join(dir, 'missing.json')], /no such suite file or folder/],
      [[bad], /cannot read seed file/],
      [['seeds', '--runs', '0'], /--runs/],
      [['chaos/leader-kill.ts', '--record'], /--record writes into seed files/],
      [['seeds', '--target', 'nope'], /unknown target nope/],
    ];
    for (const [args, pattern] of cases) {
      const r = await limbo(['replay', ...args], 30_000);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, pattern);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.equal(r.stdout, '');
    }
    const help = await limbo(['replay', '--help'], 30_000);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--runs/);
    assert.match(help.stdout, /--record/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
