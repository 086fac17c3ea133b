// scripts/check-lab-notes.mjs (part of npm run check) on a throwaway git checkout: a comment
// carrying a date, a session or issue number fails it, naming the line; the same in a
// test's data or a Markdown code block, or another project's cited issue, does not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../../scripts/check-lab-notes.mjs', import.meta.url));

function checkout(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-lab-notes-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  execFileSync('git', ['init', '-q'], { cwd: dir });
  return dir;
}

test('history in a comment fails the check naming the line; data and citations do not', (t) => {
  const clean = checkout({
    'src/a.ts': "// Restate #4513: a stale follower.\nexport const when = '2026-01-01T00:00:00Z';\n",
    'docs/a.md': '# A\n\n```sh\nrun --since 2026-01-01\n```\n',
  });
  t.after(() => rmSync(clean, { recursive: true, force: true }));
  const ok = spawnSync(process.execPath, [script], { cwd: clean, encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);

  const dirty = checkout({
    // Built from pieces, so this file's own text carries no such comment.
    'src/a.ts': `export const x = 1; ${'//'} fixed in session ${12}\n`,
    'src/b.ts': '/**\n * Measured on 2026-12-06.\n */\nexport const y = 2;\n',
    'docs/a.md': `See ${'issue'} ${38} for why.\n`,
  });
  t.after(() => rmSync(dirty, { recursive: true, force: true }));
  const bad = spawnSync(process.execPath, [script], { cwd: dirty, encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /src\/a\.ts:1: a session, issue or stop number/);
  assert.match(bad.stderr, /src\/b\.ts:2: a date/);
  assert.match(bad.stderr, /docs\/a\.md:1: a session, issue or stop number/);
});
