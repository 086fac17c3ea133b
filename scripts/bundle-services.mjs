#!/usr/bin/env node
// Bundles the service entry point (dist/src/cli/serve-main.js, after tsc) and everything it
// loads into dist/src/cli/serve.bundle.mjs with esbuild. A service process then reads one
// file instead of resolving and compiling ~300 (grpc-js, OpenTelemetry, prom-client, ours):
// about half its start-up CPU (issue 16's note). runtime/process.ts uses the bundle only
// while it is newer than the last tsc build; without it services run dist/src/cli/main.js.
// The bundle sits at the same depth as dist/src/<folder>/*.js, so the paths the code builds
// from import.meta.url (the .proto files, the compile cache) resolve as they do unbundled.
//
//   node scripts/bundle-services.mjs        (npm run build runs it after tsc)
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = `${root}dist/src/cli/serve-main.js`;
const outfile = `${root}dist/src/cli/serve.bundle.mjs`;
let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  // A production install has no dev dependencies: services then run unbundled.
  process.stderr.write('bundle-services: esbuild is not installed; services run unbundled\n');
  process.exit(0);
}
const t0 = performance.now();
await esbuild.build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  // The oldest Node the project runs on, whichever Node builds it (a bundle made on 24 runs on 20).
  target: 'node20',
  // CommonJS dependencies call require() for Node's built-ins; an ES module has none of its own.
  banner: {
    js: "import { createRequire as limboCreateRequire } from 'node:module';\nconst require = limboCreateRequire(import.meta.url);",
  },
  sourcemap: 'linked',
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
});
process.stdout.write(
  `bundle-services: ${outfile.slice(root.length)} (${Math.round(statSync(outfile).size / 1024)} KiB) in ${Math.round(performance.now() - t0)} ms\n`,
);
