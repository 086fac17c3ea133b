// The CI recipe for users (docs/ci/limbo.yml → scripts/ci/user-recipe.sh) run for real, as
// the workflow runs it: green when every verdict is the documented one, with each run's
// junit.xml and report.html gathered for upload; red (non-zero) when a verdict is not;
// exit 2 on a suite path that does not exist.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnCaptured, type Captured } from '../helpers/limbo-cli.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const script = path.join(repo, 'scripts/ci/user-recipe.sh');

function runRecipe(args: string[], env: Record<string, string>, timeoutMs = 180_000): Promise<Captured> {
  return spawnCaptured('bash', [script, ...args], {
    cwd: repo,
    env: { LIMBO_RECIPE_INSTALL: '0', LIMBO_PROMETHEUS: 'off', ...env },
    timeoutMs,
  });
}

async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

test('the recipe is green on documented verdicts and gathers junit.xml and report.html', async () => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'limbo-recipe-'));
  try {
    const out = path.join(tmp, 'runs');
    const artifacts = path.join(tmp, 'artifacts');
    const r = await runRecipe(['chaos/startup-race.ts'], {
      LIMBO_TARGET: 'reference:legacy',
      LIMBO_OUT: out,
      LIMBO_ARTIFACTS: artifacts,
    });
    assert.equal(r.code, 0, r.output);
    const files = await filesUnder(artifacts);
    assert.equal(files.length, 2, files.join(', '));
    assert.ok(
      files.some((f) => /^startup-race\/[^/]+\/junit\.xml$/.test(f)),
      files.join(', '),
    );
    assert.ok(
      files.some((f) => /^startup-race\/[^/]+\/report\.html$/.test(f)),
      files.join(', '),
    );
    const junit = await readFile(
      path.join(
        artifacts,
        files.find((f) => f.endsWith('junit.xml'))!,
      ),
      'utf8',
    );
    assert.match(junit, /<testsuite/);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});

test('the recipe is red when a verdict is not the documented one; a missing suite exits 2', async () => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'limbo-recipe-'));
  // The startup race without its expectedToFailOn: on reference:legacy it fails, undocumented.
  // Inside the package, so that `import … from 'limbo'` resolves to this checkout.
  const suiteDir = await mkdtemp(path.join(repo, '.recipe-test-'));
  try {
    const source = await readFile(path.join(repo, 'chaos/startup-race.ts'), 'utf8');
    const undocumented = source.replace(/^\s*expectedToFailOn:.*$/m, '');
    assert.notEqual(undocumented, source);
    const suite = path.join(suiteDir, 'startup-race-undocumented.ts');
    await writeFile(suite, undocumented);
    const artifacts = path.join(tmp, 'artifacts');
    const r = await runRecipe([suite], {
      LIMBO_TARGET: 'reference:legacy',
      LIMBO_OUT: path.join(tmp, 'runs'),
      LIMBO_ARTIFACTS: artifacts,
    });
    assert.notEqual(r.code, 0, r.output);
    assert.notEqual(r.code, 2, r.output);
    assert.match(r.output, /red: limbo run exited/);
    // The red run's evidence is gathered all the same.
    assert.ok((await filesUnder(artifacts)).some((f) => f.endsWith('junit.xml')));

    const missing = await runRecipe(['chaos/no-such-suite.ts'], { LIMBO_OUT: path.join(tmp, 'runs2') });
    assert.equal(missing.code, 2, missing.output);
    assert.match(missing.output, /no suite file or folder "chaos\/no-such-suite.ts"/);
  } finally {
    await rm(suiteDir, { recursive: true, force: true });
    await rm(tmp, { recursive: true, force: true });
  }
});
