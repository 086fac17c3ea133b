// `limbo explore` for real: against reference:legacy with only leader kills in the catalogue it
// must find a failing schedule (the legacy protocol leaves the resumed calls hanging), shrink
// it, save it; the saved seed then passes on the fixed protocol through `limbo run`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

test(
  'explore finds, shrinks and saves a failing schedule on reference:legacy; the seed replays',
  { timeout: 300_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'limbo-explore-'));
    try {
      const seeds = join(dir, 'seeds');
      const out = join(dir, 'runs');
      const found = await limbo(
        [
          'explore',
          '--target',
          'reference:legacy',
          '--faults',
          'kill',
          '--max-faults',
          '1',
          '--runs',
          '1',
          '--seed',
          '7',
          '--chaos',
          '4s',
          '--converge',
          '4s',
          '--shrink-runs',
          '1',
          '--confirm-runs',
          '0',
          '--seeds-dir',
          seeds,
          '--out',
          out,
        ],
        150_000,
      );
      assert.equal(
        found.code,
        1,
        `explore exits 1 when it found a failure\n${found.stdout}\n${found.stderr}`,
      );
      assert.match(found.stdout, /kill leaderOf\(\d\)/);
      assert.match(found.stdout, /explored 1 schedule\(s\): 1 failed/);
      const files = readdirSync(seeds);
      assert.equal(files.length, 1);
      const saved = JSON.parse(readFileSync(join(seeds, files[0]!), 'utf8')) as SeedFile;
      assert.equal(saved.foundOn, 'reference:legacy');
      assert.deepEqual(saved.expectedToFailOn, ['reference:legacy']);
      assert.ok(saved.failed.includes('noClientLeftHanging'), `failed: ${saved.failed.join(', ')}`);
      assert.equal(saved.schedule.length, 1);
      assert.equal(saved.schedule[0]?.fault, 'kill');

      const replay = await limbo(
        ['run', join(seeds, files[0]!), '--target', 'reference', '--out', out],
        120_000,
      );
      assert.equal(
        replay.code,
        0,
        `the seed passes on the fixed protocol\n${replay.stdout}\n${replay.stderr}`,
      );
      assert.match(replay.stdout, new RegExp(`seed ${saved.seed}: PASS`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('explore rejects bad options with exit 2', async () => {
  for (const args of [
    ['--faults', 'meteor'],
    ['--chaos', '1s'],
    ['--target', 'nope'],
    ['stray'],
    ['--shrink-confirm', '3/2'],
  ]) {
    const r = await limbo(['explore', ...args], 30_000);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
  }
  const help = await limbo(['explore', '--help'], 30_000);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--shrink-runs/);
  assert.match(help.stdout, /--shrink-confirm/);
});
