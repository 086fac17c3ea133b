// The import flow of src/ (scripts/check-imports.mjs, run by `npm run check`): src/ itself is
// clean, and the checker does catch an import against the flow, a folder with no place in it,
// and a file cycle, and lets a folder import one file of another it may not import whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CheckImports {
  checkImports: (root: string) => string[];
}

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const load = async (): Promise<CheckImports> =>
  (await import(join(repo, 'scripts/check-imports.mjs'))) as CheckImports;

test('src/ imports flow one way with no file cycles', async () => {
  const { checkImports } = await load();
  assert.deepEqual(checkImports(join(repo, 'src')), []);
});

test('the import check names an upward import, an unplaced folder and a cycle', async (t) => {
  const { checkImports } = await load();
  const root = mkdtempSync(join(tmpdir(), 'limbo-imports-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const file = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  file('run-data/a.ts', "import { x } from '../runner/b.js';\nexport const a = x;\n");
  file('runner/b.ts', "import { a } from '../run-data/a.js';\nexport const x = 1; export const y = a;\n");
  file('elsewhere/c.ts', "import { x } from '../runner/b.js';\nexport const c = x;\n");
  file('checkers/d.ts', "export { e } from './e.js';\nexport const d = 1;\n");
  file('checkers/e.ts', "import { d } from './d.js';\nexport const e = d;\n");
  // runner/ may import the one file services/bugs.ts, not the rest of services/.
  file('services/bugs.ts', 'export const bugs = 1;\n');
  file('services/other.ts', 'export const other = 1;\n');
  file(
    'runner/f.ts',
    "import { bugs } from '../services/bugs.js';\nimport { other } from '../services/other.js';\nexport const f = bugs + other;\n",
  );
  const problems = checkImports(root);
  assert.ok(
    problems.some((p) =>
      /runner\/f\.ts imports services\/other\.ts: runner\/ may not import services\//.test(p),
    ),
    problems.join('\n'),
  );
  assert.ok(!problems.some((p) => /services\/bugs\.ts:/.test(p)), problems.join('\n'));
  assert.ok(
    problems.some((p) => /run-data\/a\.ts imports runner\/b\.ts: run-data\/ may not import runner\//.test(p)),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => /folder elsewhere\/ has no place/.test(p)),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => /import cycle: .*run-data\/a\.ts.*runner\/b\.ts/.test(p)),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => /import cycle: checkers\/d\.ts -> checkers\/e\.ts -> checkers\/d\.ts/.test(p)),
    problems.join('\n'),
  );
});
