// `npm run bench [name…]`: runs every bench/<name>.bench.ts (or the named ones) in turn, each
// in its own child process (so one benchmark's heap, threads and peak RSS never colour the
// next one's figures). Each benchmark measures its subject and its physical ceiling side by
// side in the same run and prints ratios, so numbers from a noisy 2-core machine still mean
// something; the run ends with one summary table of the goals (bench/summary.ts).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { GOAL_LINE, recordedGoals, recordGoalsFrom, summaryTable } from './summary.js';

interface BenchModule {
  run(): Promise<void>;
}

const dir = fileURLToPath(new URL('.', import.meta.url));
const names = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.js'))
  .map((f) => f.replace(/\.bench\.js$/, ''))
  .sort();
const args = process.argv.slice(2);

if (args[0] === '--one') {
  // The child: one benchmark, then its recorded goals as one line for the parent.
  const mod = (await import(new URL(`${args[1]}.bench.js`, import.meta.url).href)) as BenchModule;
  await mod.run();
  process.stdout.write(`${GOAL_LINE}${JSON.stringify(recordedGoals())}\n`);
  process.exit(0);
}
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(
    `usage: npm run bench [name…]\n\nRuns the named benchmarks (all when none is named), each in its own process, and ends with the goals table.\nbenchmarks: ${names.join(', ')}\n`,
  );
  process.exit(0);
}
const unknown = args.filter((a) => !names.includes(a));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')} (have ${names.join(', ')})\n`);
  process.exit(2);
}
const wanted = args.length > 0 ? names.filter((n) => args.includes(n)) : names;

/** Runs one benchmark in a child; its output passes through, its goals line is kept. */
function runChild(name: string): Promise<number | null> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--one', name], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    if (line.startsWith(GOAL_LINE)) recordGoalsFrom(line.slice(GOAL_LINE.length));
    else process.stdout.write(line + '\n');
  });
  const stop = (): void => void child.kill('SIGINT');
  process.once('SIGINT', stop);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      process.off('SIGINT', stop);
      resolve(code);
    }),
  );
}

const ran = new Set<string>();
let failed = 0;
for (const name of wanted) {
  process.stdout.write(`\n== ${name}\n`);
  const code = await runChild(name);
  if (code === 0) ran.add(name);
  else {
    failed++;
    process.stdout.write(`(${name} exited ${code})\n`);
  }
}
process.stdout.write(`\n== summary (goals of issue 16; ratios measured side by side in this run)\n`);
process.stdout.write(summaryTable(ran));
process.exitCode = failed > 0 ? 1 : 0;
