// `limbo explore --parallel 2` beside `--parallel 1` in the same run: the same seed, the same
// schedules (explore draws schedule i from the seed's fork `run-i`, whatever the parallelism),
// each side timed end to end as a user runs it (the CLI in a child process). Printed as
// schedules per hour and their ratio; the ceiling of the ratio is 2 (two schedules at once).
// LIMBO_BENCH_EXPLORE_RUNS sets the schedules per side (default 4).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt } from './load.js';
import { recordGoal } from './summary.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const RUNS = Number(process.env.LIMBO_BENCH_EXPLORE_RUNS ?? 4);
const SIDE_TIMEOUT_MS = 15 * 60_000;

async function side(parallel: number, dir: string): Promise<{ ms: number; runs: number }> {
  const args = [
    join(root, 'bin/limbo.js'),
    'explore',
    '--target',
    'reference',
    '--seed',
    '16',
    '--runs',
    String(RUNS),
    '--chaos',
    '6s',
    '--converge',
    '6s',
    // A schedule that fails on reference would be shrunk: time only the search itself.
    '--shrink-runs',
    '0',
    '--confirm-runs',
    '0',
    '--parallel',
    String(parallel),
    '--seeds-dir',
    join(dir, `seeds-${parallel}`),
    '--out',
    join(dir, `runs-${parallel}`),
  ];
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => child.kill('SIGINT'), SIDE_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  const ms = performance.now() - t0;
  const runs = (out.match(/^(?:\[slot \d+\] )?run \d+: /gm) ?? []).length;
  if (code !== 0 && code !== 1)
    throw new Error(`limbo explore --parallel ${parallel} exited ${code}:\n${out.slice(-2000)}`);
  return { ms, runs };
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-bench-explore-'));
  try {
    const one = await side(1, dir);
    const two = await side(2, dir);
    const perHour = (s: { ms: number; runs: number }): number => s.runs / (s.ms / 3_600_000);
    process.stdout.write(
      `--parallel 1: ${one.runs} schedules in ${fmt(one.ms / 1000)} s = ${fmt(perHour(one), 0)} schedules/hour\n` +
        `--parallel 2: ${two.runs} schedules in ${fmt(two.ms / 1000)} s = ${fmt(perHour(two), 0)} schedules/hour\n` +
        `ratio schedules/hour 2 ÷ 1: ${fmt(perHour(two) / perHour(one), 2)} (ceiling 2)\n`,
    );
    recordGoal('exploreParallel', perHour(two) / perHour(one));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
