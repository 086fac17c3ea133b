// scripts/docker/prune-manifest.mjs (run inside the image build) on this repository's own
// package files: the dropped packages and everything only they needed leave the lock, what
// the services load stays, and every remaining dependency still resolves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  optional?: boolean;
}

test('prune-manifest drops packages and their exclusive dependencies, keeps the lock consistent', () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-prune-'));
  try {
    copyFileSync(join(repo, 'package.json'), join(dir, 'package.json'));
    copyFileSync(join(repo, 'package-lock.json'), join(dir, 'package-lock.json'));
    execFileSync(
      process.execPath,
      [join(repo, 'scripts/docker/prune-manifest.mjs'), '@restatedev/restate-server', 'testcontainers'],
      { cwd: dir, stdio: 'pipe' },
    );
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, LockEntry>;
    };
    assert.equal(pkg.dependencies['testcontainers'], undefined);
    assert.equal(pkg.dependencies['@restatedev/restate-server'], undefined);
    assert.ok(pkg.dependencies['@grpc/grpc-js'], 'what the services load stays');
    assert.deepEqual(lock.packages['']!.dependencies, pkg.dependencies);
    const paths = Object.keys(lock.packages);
    for (const gone of [
      'testcontainers',
      'dockerode',
      '@restatedev/restate-server',
      '@restatedev/restate-server-darwin-x64',
    ])
      assert.ok(!paths.includes(`node_modules/${gone}`), `${gone} left the lock`);
    assert.ok(paths.includes('node_modules/@grpc/grpc-js'));
    // Every non-optional dependency of every kept entry resolves to a kept entry.
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.dependencies ?? {})) {
        const candidates: string[] = [];
        for (let dir = path; ;) {
          candidates.push(`${dir === '' ? '' : dir + '/'}node_modules/${name}`);
          if (dir === '') break;
          const up = dir.lastIndexOf('/node_modules/');
          dir = up < 0 ? '' : dir.slice(0, up);
        }
        assert.ok(
          candidates.some((c) => c in lock.packages),
          `${path || 'root'} needs ${name}`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
