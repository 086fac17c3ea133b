// `npm run bench [name…]`: runs every bench/<name>.bench.ts (or the named ones) in turn.
// Each benchmark measures its subject and its physical ceiling side by side in the same
// run and prints ratios, so numbers from a noisy 2-core machine still mean something.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface BenchModule {
  run(): Promise<void>;
}

const dir = fileURLToPath(new URL('.', import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace(/\.bench\.js$/, '')))
  .sort();
if (files.length === 0) {
  process.stderr.write(`no benchmarks matched ${wanted.join(', ')}\n`);
  process.exitCode = 2;
}
for (const file of files) {
  process.stdout.write(`\n== ${file.replace(/\.bench\.js$/, '')}\n`);
  const mod = (await import(new URL(file, import.meta.url).href)) as BenchModule;
  await mod.run();
}
