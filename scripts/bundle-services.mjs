#!/usr/bin/env node
// Bundles the two entry points `limbo` processes start from (after tsc) with esbuild, each
// with everything it loads, into one file:
//   dist/src/cli/serve.bundle.cjs  ← serve-main.js: a service (`limbo serve <role>`), CommonJS so
//                                    serve-launch.js can run it from cached bytecode (vm.Script)
//   dist/src/cli/limbo.bundle.mjs  ← runner-bundle.js: the CLI and the whole library (bin/limbo.js)
// A process then reads one file instead of resolving and compiling ~300-450 (grpc-js,
// OpenTelemetry, prom-client, ours): about half a service's start-up CPU, and ~9 MiB less
// resident memory. runtime/process.ts and cli/entry.ts use a bundle only
// while it is newer than the last tsc build; without it they run the tsc output.
// Each bundled module keeps its own import.meta.url (load-ts.ts's ownImportMeta, as for suite
// files), so a path a module builds from it (the .proto files, the Restate endpoint, the docker
// reaper, the built-in declared targets) names the same file as unbundled; only the runner
// bundle's entry keeps the bundle's, which it registers as the library `limbo` loads.
//
//   node scripts/bundle-services.mjs        (npm run build runs it after tsc)
import { readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundles = [
  {
    entry: 'dist/src/cli/serve-main.js',
    outfile: 'dist/src/cli/serve.bundle.cjs',
    format: 'cjs',
    // The bundle's own URL, for the modules' URLs written relative to it (ownImportMeta).
    banner: 'var __limboBundleUrl = require("node:url").pathToFileURL(__filename).href;',
    define: { 'import.meta.url': '__limboBundleUrl' },
    // import() of a built-in (the OTLP exporters' "http") as require: a script run through
    // vm.Script has no loader of its own for import().
    supported: { 'dynamic-import': false },
  },
  {
    entry: 'dist/src/cli/runner-bundle.js',
    outfile: 'dist/src/cli/limbo.bundle.mjs',
    format: 'esm',
    // CommonJS dependencies call require() for Node's built-ins; an ES module has none of its own.
    banner:
      "import { createRequire as limboCreateRequire } from 'node:module';\nconst require = limboCreateRequire(import.meta.url);",
    // Loaded only by some commands, and not bundleable: esbuild finds its own binary, and the
    // docker runtime's testcontainers reaches native addons (ssh2, cpu-features).
    // c8 (runs with --coverage) reaches for optional reporters it does not carry.
    external: ['esbuild', 'testcontainers', 'c8'],
  },
];
let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  // An install without esbuild: every process runs the tsc output.
  process.stderr.write('bundle-services: esbuild is not installed; limbo runs unbundled\n');
  process.exit(0);
}
// The services' bundle was an ES module before it was CommonJS: an old one left in dist is no
// longer run, so it goes.
for (const old of ['dist/src/cli/serve.bundle.mjs', 'dist/src/cli/serve.bundle.mjs.map'])
  rmSync(root + old, { force: true });
// After tsc (npm run build), so the tsc output is there to import.
const { ownImportMeta } = await import('../dist/src/launch/load-ts.js');
for (const { entry, outfile, format, banner, define = {}, supported = {}, external = [] } of bundles) {
  const t0 = performance.now();
  const built = await esbuild.build({
    entryPoints: [root + entry],
    outfile: root + outfile,
    bundle: true,
    platform: 'node',
    format,
    // The oldest Node the project runs on, whichever Node builds it (a bundle made on 24 runs on 20).
    target: 'node20',
    external,
    plugins: [
      ownImportMeta({
        except: [root + 'dist/src/cli/runner-bundle.js'],
        relativeTo: dirname(root + outfile),
      }),
    ],
    banner: { js: banner },
    define,
    supported,
    sourcemap: 'linked',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    write: false,
  });
  // Services and runners may be starting from these files while a build runs (npx in a clone
  // runs the package's prepare, which builds, in the middle of the tests): a file is replaced
  // whole (written beside it, then renamed over it), or, when its bytes are the same, only
  // touched, so that it stays newer than the tsc build (launch/bundle.ts) and nothing reads it
  // half-written.
  for (const file of built.outputFiles) {
    if (sameBytes(file.path, file.contents)) {
      const now = new Date();
      utimesSync(file.path, now, now);
      continue;
    }
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.contents);
    renameSync(tmp, file.path);
  }
  // V8 keeps a script's whole source for the process's life, in one byte a character only if
  // every character is Latin-1: one other character (esbuild cannot escape it inside a
  // String.raw template) doubles it (the runner's: 2.4 -> 4.9 MiB). Escape it in the source.
  const bytes = readFileSync(root + outfile);
  const at = bytes.findIndex((b) => b > 0x7f);
  if (at !== -1) {
    const before = bytes.subarray(0, at).toString('latin1');
    const around = bytes.subarray(Math.max(0, at - 40), at + 12).toString('utf8');
    process.stderr.write(
      `bundle-services: ${outfile}:${before.split('\n').length} has a non-ASCII character (${JSON.stringify(around)}): write it as an escape (\\u…) so the bundle stays one byte a character\n`,
    );
    process.exit(1);
  }
  process.stdout.write(
    `bundle-services: ${outfile} (${Math.round(statSync(root + outfile).size / 1024)} KiB) in ${Math.round(performance.now() - t0)} ms\n`,
  );
}

function sameBytes(path, contents) {
  try {
    return Buffer.from(contents.buffer, contents.byteOffset, contents.byteLength).equals(readFileSync(path));
  } catch {
    return false;
  }
}
