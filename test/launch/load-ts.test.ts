// Suite and target files load in the runner's own thread (launch/load-ts.ts): a suite's relative
// TypeScript imports are part of it, its package imports are the runner's own modules, each
// file keeps its own import.meta, errors name the .ts file and line, and nothing is left
// behind (no temporary folder, no esbuild process).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadSuite } from '../../src/runner/load-suites.js';
import { isSuite } from '../../src/runner/suite.js';
import { UsageError } from '../../src/util/errors.js';
import { importTypeScript } from '../../src/launch/load-ts.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
// Inside the package, so `import … from 'limbo'` resolves through its self-reference.
mkdirSync(join(root, '.limbo'), { recursive: true });
const dir = mkdtempSync(join(root, '.limbo', 'load-ts-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'lib'));
writeFileSync(
  join(dir, 'lib', 'helper.ts'),
  `import { noClientLeftHanging, type Checker } from 'limbo';
export const here: string = import.meta.url;
export const folder: string = import.meta.dirname;
export function checks(): Checker[] {
  return [noClientLeftHanging()];
}
`,
);
writeFileSync(
  join(dir, 'with-helper.ts'),
  `import { defineSuite } from 'limbo';
import { checks, folder, here } from './lib/helper.js';
import { readFileSync } from 'node:fs';
const self = import.meta.url;
const data = JSON.parse(readFileSync(new URL('./data.json', import.meta.url), 'utf8')) as { name: string };
await Promise.resolve();
export const urls = { self, here, folder };
export default defineSuite({ name: data.name, why: 'a suite split over files', schedule: [], expect: checks() });
`,
);
writeFileSync(join(dir, 'data.json'), JSON.stringify({ name: 'fixture-split' }));
writeFileSync(
  join(dir, 'syntax.ts'),
  `import { defineSuite } from 'limbo';\nexport default defineSuite({ name: 'x', \n  why: ;\n});\n`,
);
writeFileSync(
  join(dir, 'throws.ts'),
  `// line 1\n// line 2\nfunction boom(): never {\n  throw new Error('the suite threw');\n}\nboom();\nexport default 1;\n`,
);
writeFileSync(
  join(dir, 'missing.ts'),
  `import { nothing } from 'no-such-package-anywhere';\nexport default nothing;\n`,
);

// The loader's temporary folders go to os.tmpdir(), which reads TMPDIR at each call: this file's
// own, so a test file running beside it (and loading suites into the shared /tmp) cannot show up
// as a folder left behind here — it did once in a CI rehearsal.
const ownTmp = mkdtempSync(join(tmpdir(), 'limbo-load-ts-tmp-'));
process.env.TMPDIR = ownTmp;
after(() => rmSync(ownTmp, { recursive: true, force: true }));
const ownTemporaries = () => readdirSync(tmpdir()).filter((f) => f.startsWith('limbo-ts-'));

test('a suite split over files loads as one module that imports the runner’s own limbo', async () => {
  const before = ownTemporaries();
  const { suite } = await loadSuite(join(dir, 'with-helper.ts'));
  assert.equal(suite.name, 'fixture-split');
  assert.ok(isSuite(suite), 'defineSuite is the runner’s own (one copy of the library)');
  assert.equal(suite.expect[0]?.name, 'noClientLeftHanging');
  const mod = await importTypeScript(join(dir, 'with-helper.ts'));
  const urls = mod.urls as { self: string; here: string; folder: string };
  assert.equal(urls.self, pathToFileURL(join(dir, 'with-helper.ts')).href);
  assert.equal(
    urls.here,
    pathToFileURL(join(dir, 'lib', 'helper.ts')).href,
    'each file keeps its own import.meta.url',
  );
  assert.equal(urls.folder, join(dir, 'lib'));
  assert.equal(mod.default, suite, 'an unchanged file loads once');
  assert.deepEqual(ownTemporaries(), before, 'the built module is not left in the temporary folder');
});

test('a suite that does not build, throws or imports nothing known is a usage error naming its file', async () => {
  await assert.rejects(
    loadSuite(join(dir, 'syntax.ts')),
    (err: unknown) =>
      err instanceof UsageError && /syntax\.ts/.test(err.message) && /syntax\.ts:3/.test(err.message),
  );
  await assert.rejects(loadSuite(join(dir, 'missing.ts')), (err: unknown) => {
    assert.ok(err instanceof UsageError);
    assert.match(err.message, /missing\.ts/);
    assert.match(err.message, /no-such-package-anywhere/);
    return true;
  });
  // The stack of an error thrown while the suite loads points at the .ts line it came from.
  await assert.rejects(importTypeScript(join(dir, 'throws.ts')), (err: unknown) => {
    assert.ok(err instanceof Error && err.message === 'the suite threw');
    assert.match(err.stack ?? '', /throws\.ts:4/);
    return true;
  });
});

test('loading leaves no esbuild process behind', async () => {
  await importTypeScript(join(dir, 'with-helper.ts'));
  writeFileSync(join(dir, 'again.ts'), `export default 'again';\n`);
  assert.equal((await importTypeScript(join(dir, 'again.ts'))).default, 'again');
  // This process's esbuild children (Linux: /proc/<pid>/task/*/children). esbuild's stop()
  // ends its service's input; the process exits a moment later (bounded wait: 5 s).
  const esbuildChildren = (): string[] =>
    readdirSync(`/proc/${process.pid}/task`)
      .flatMap((t) =>
        readFileSync(`/proc/${process.pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean),
      )
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('esbuild');
        } catch {
          return false;
        }
      });
  let esbuild = esbuildChildren();
  for (const until = Date.now() + 5000; esbuild.length > 0 && Date.now() < until; esbuild = esbuildChildren())
    await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(esbuild, [], 'esbuild’s service process was stopped');
});
