// `npm run bench [name…]`: runs every bench/<name>.bench.ts (or the named ones) in turn.
// Each benchmark measures its subject and its physical ceiling side by side in the same
// run and prints ratios, so numbers from a noisy 2-core machine still mean something; the
// run ends with one summary table of the goals (bench/summary.ts): met, short or not run.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { summaryTable } from './summary.js';

interface BenchModule {
  run(): Promise<void>;
}

const dir = fileURLToPath(new URL('.', import.meta.url));
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.bench.js'))
    .map((f) => f.replace(/\.bench\.js$/, ''))
    .sort();
  process.stdout.write(
    `usage: npm run bench [name…]\n\nRuns the named benchmarks (all when none is named) and ends with the goals table.\nbenchmarks: ${names.join(', ')}\n`,
  );
  process.exit(0);
}
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => args.length === 0 || args.includes(f.replace(/\.bench\.js$/, '')))
  .sort();
if (files.length === 0) {
  process.stderr.write(`no benchmarks matched ${args.join(', ')}\n`);
  process.exit(2);
}
const ran = new Set<string>();
for (const file of files) {
  const name = file.replace(/\.bench\.js$/, '');
  process.stdout.write(`\n== ${name}\n`);
  const mod = (await import(new URL(file, import.meta.url).href)) as BenchModule;
  await mod.run();
  ran.add(name);
}
process.stdout.write(`\n== summary (goals of issue 16; ratios measured side by side in this run)\n`);
process.stdout.write(summaryTable(ran));
