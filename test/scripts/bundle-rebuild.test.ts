// A build that runs while services start (the first `npx limbo` in a clone runs the package's
// prepare, which builds, in the middle of the tests) must never leave a bundle half-written:
// scripts/bundle-services.mjs keeps a bundle whose bytes did not change (the same file, only
// touched, so it stays newer than the tsc build and is still the one services start from), and
// replaces a changed one whole, by a rename, never writing into the file a process may be
// reading. The script runs on a copy of this build (its dist/src, package.json and
// node_modules), so the tests running beside this one keep their bundles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleIfCurrent } from '../../src/launch/bundle.js';

const repo = fileURLToPath(new URL('../../..', import.meta.url));

function copyOfBuild(): string {
  const root = mkdtempSync(join(tmpdir(), 'limbo-rebuild-'));
  mkdirSync(join(root, 'scripts'));
  copyFileSync(join(repo, 'scripts/bundle-services.mjs'), join(root, 'scripts/bundle-services.mjs'));
  copyFileSync(join(repo, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'));
  cpSync(join(repo, 'dist/src'), join(root, 'dist/src'), { recursive: true });
  copyFileSync(join(repo, 'dist/.tsbuildinfo'), join(root, 'dist/.tsbuildinfo'));
  return root;
}

function rebuild(root: string): void {
  const r = spawnSync(process.execPath, [join(root, 'scripts/bundle-services.mjs')], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
}

test('a rebuild keeps a bundle whose bytes are the same, and replaces a changed one by a rename', () => {
  const root = copyOfBuild();
  try {
    const files = ['dist/src/cli/serve.bundle.cjs', 'dist/src/cli/limbo.bundle.mjs'].map((f) =>
      join(root, f),
    );
    const current = (f: string): boolean =>
      bundleIfCurrent(f, 'the tsc output', join(root, 'dist/.tsbuildinfo')) === f;
    rebuild(root);
    const before = files.map((f) => statSync(f));
    rebuild(root);
    files.forEach((f, i) => {
      const after = statSync(f);
      assert.equal(after.ino, before[i]!.ino, `${f} was replaced although its bytes are the same`);
      assert.ok(after.mtimeMs >= before[i]!.mtimeMs, `${f} was not touched`);
      assert.ok(current(f), `${f} is no longer current`);
    });

    // A bundle that differs from what the build makes: a second name for it shows whether the
    // build wrote into that file or put a new one in its place.
    const bundle = files[0]!;
    const built = readFileSync(bundle);
    const stale = Buffer.concat([built, Buffer.from('\n// not what the build makes\n')]);
    writeFileSync(`${bundle}.tmp`, stale);
    renameSync(`${bundle}.tmp`, bundle);
    const link = `${bundle}.link`;
    linkSync(bundle, link);
    rebuild(root);
    assert.ok(readFileSync(bundle).equals(built), 'the build put its bundle back');
    assert.ok(readFileSync(link).equals(stale), 'the build wrote into the file a service may be reading');
    assert.ok(current(bundle));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
