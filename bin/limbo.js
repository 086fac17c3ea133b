#!/usr/bin/env node
// The `limbo` command: runs the compiled CLI (built by `npm ci` / `npm run build`).
import { existsSync } from 'node:fs';
const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('limbo: not built yet; run `npm run build` (npm ci does it too)\n');
  process.exit(2);
}
await import(main.href);
