// The runner's bundle entry: scripts/bundle-services.mjs bundles this file and everything it
// imports into dist/src/cli/limbo.bundle.mjs, which `limbo` (bin/limbo.js → entry.ts) loads
// when it is current. It is the whole library (what `import … from 'limbo'` gives) plus the
// CLI, so a suite or target file the runner loads gets this same copy of the library — one
// `defineSuite`, one fault, target and checker registry — and not a second one from
// dist/src/index.js (launch/load-ts.ts maps the import here).
import { useLibraryModule } from '../launch/load-ts.js';

export * from '../index.js';
export { runLimbo } from './cli.js';
export { loadSuites } from '../runner/load-suites.js';

useLibraryModule(import.meta.url);
