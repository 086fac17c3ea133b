#!/usr/bin/env node
// The `limbo` command: runs the compiled CLI (built by `npm ci` / `npm run build`), from the
// runner's bundle when it is current (dist/src/cli/entry.js).
import { existsSync } from 'node:fs';
const entry = new URL('../dist/src/cli/entry.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('limbo: not built yet; run `npm run build` (npm ci does it too)\n');
  process.exit(2);
}
const { startLimbo } = await import(entry.href);
await startLimbo(process.argv.slice(2));
