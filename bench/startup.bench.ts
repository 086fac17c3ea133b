// The reference topology's start-up with the services' bytecode cache (serve-launch.ts) and
// without it, side by side in one run: the same topology started and led N times each way,
// alternated, with the wall time to serving and the CPU its five services spent on the way
// (from /proc when it serves). Beside them, the floor of any start on this machine: five bare
// Node processes (`node -e 0`) started side by side, to exit.
// LIMBO_BENCH_STARTUP_RUNS sets the starts per side (default 6).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runnerLibrary } from '../src/cli/entry.js';
import { bareNodesMs, cpuMsOf, fmt } from './load.js';

const RUNS = Number(process.env.LIMBO_BENCH_STARTUP_RUNS ?? 6);
const TOPOLOGY = { processors: 3, partitions: 4 };

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

export async function run(): Promise<void> {
  const { createTarget } = await runnerLibrary();
  const root = mkdtempSync(join(tmpdir(), 'limbo-bench-startup-'));
  const cacheDir = join(root, 'bytecode');
  const start = async (cache: string, hold: number): Promise<{ ms: number; cpuMs: number }> => {
    const runDir = mkdtempSync(join(root, 'run-'));
    const env = { ...process.env, LIMBO_COMPILE_CACHE: cache };
    const t0 = performance.now();
    const started = await createTarget('reference').start(TOPOLOGY, { runDir, seed: 1, env });
    const ms = performance.now() - t0;
    const cpuMs = [...started.services.values()]
      .map((s) => s.pid())
      .reduce((sum: number, pid) => sum + (pid !== undefined ? cpuMsOf(pid) : 0), 0);
    // A start that writes bytecode does so 2 s in (serve-launch.ts); `hold` lets it.
    if (hold > 0) await new Promise((r) => setTimeout(r, hold));
    await started.stop();
    return { ms, cpuMs };
  };
  try {
    // The cache as a machine has it after its first run: written by one start.
    await start(cacheDir, 3000);
    const on: { ms: number; cpuMs: number }[] = [];
    const off: { ms: number; cpuMs: number }[] = [];
    const bare: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      on.push(await start(cacheDir, 0));
      off.push(await start('off', 0));
      bare.push(await bareNodesMs(5));
    }
    const line = (name: string, xs: { ms: number; cpuMs: number }[]): string =>
      `${name}: start-up median ${fmt(median(xs.map((x) => x.ms)), 0)} ms, services' CPU to serving median ${fmt(median(xs.map((x) => x.cpuMs)), 0)} ms`;
    console.log(
      `${TOPOLOGY.processors} processors, ${TOPOLOGY.partitions} partitions, ${RUNS} starts each way, alternated`,
    );
    console.log(line('bytecode cache on ', on));
    console.log(line('bytecode cache off', off));
    console.log(`five bare Node processes side by side, to exit: median ${fmt(median(bare), 0)} ms`);
    console.log(
      `on ÷ off: start-up ${fmt(median(on.map((x) => x.ms)) / median(off.map((x) => x.ms)), 2)}, services' CPU ${fmt(median(on.map((x) => x.cpuMs)) / median(off.map((x) => x.cpuMs)), 2)}`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
