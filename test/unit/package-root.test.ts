// Files that belong to a module's folder are named from limbo's package root (util/package-root.ts),
// because in the runner's bundle every module's import.meta.url is the bundle's: the Restate
// target looked for dist/src/cli/endpoint-main.js and its services never started.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { distFile, packageRoot } from '../../src/util/package-root.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

test('the package root is the same from a module of dist/src and from the runner bundle', () => {
  const root = packageRoot();
  assert.equal(root + '/', repo);
  for (const from of [
    'dist/src/targets/restate/cluster.js',
    'dist/src/cli/limbo.bundle.mjs',
    'dist/src/runtime/docker-reaper.js',
  ])
    assert.equal(packageRoot(pathToFileURL(repo + from).href), root, from);
  assert.throws(() => packageRoot(pathToFileURL('/tmp/not-limbo/x.js').href), /package\.json not found/);
});

test('the files other processes are started from exist where distFile names them', () => {
  for (const file of [
    'src/targets/restate/endpoint-main.js',
    'src/runtime/docker-reaper-main.js',
    'src/cli/main.js',
  ])
    assert.ok(existsSync(distFile(file)), file);
});
