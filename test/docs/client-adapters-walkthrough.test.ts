// The walk-through in docs/client-adapters.md ("From an empty folder to a verdict") done as
// its reader does it: its target and suite files, exactly as the page prints them, written to
// an empty folder whose node_modules holds only `limbo` (this checkout) and `nats`, then
// `limbo validate` and `limbo run` as separate processes from that folder. Checked: validate
// says ok, the run passes, and no nats-server it started is left. The run skips when
// nats-server is not installed, but fails then with LIMBO_NATS_REQUIRED=1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCommand } from '../../src/targets/declarative/validate.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = join(root, 'bin', 'limbo.js');
const required = process.env['LIMBO_NATS_REQUIRED'] === '1';
const installed = findCommand('nats-server') !== undefined;

/** The code block that follows the line "`<file>`:" in the walk-through section. */
function fileFromPage(page: string, file: string): string {
  const section = page.slice(page.indexOf('## From an empty folder to a verdict'));
  const m = new RegExp('^`' + file.replace(/[.]/g, '\\.') + '`:\\n\\n```ts\\n([\\s\\S]*?)\\n```$', 'm').exec(
    section,
  );
  assert.ok(m?.[1] !== undefined, `docs/client-adapters.md: no ts block after \`${file}\`:`);
  return m[1] + '\n';
}

/** An empty folder with the page's two files and, as `npm install ../limbo nats` leaves them, limbo and nats. */
function userFolder(): string {
  const page = readFileSync(join(root, 'docs', 'client-adapters.md'), 'utf8');
  const dir = mkdtempSync(join(tmpdir(), 'limbo-walkthrough-'));
  mkdirSync(join(dir, 'targets'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(root, join(dir, 'node_modules', 'limbo'), 'dir');
  symlinkSync(join(root, 'node_modules', 'nats'), join(dir, 'node_modules', 'nats'), 'dir');
  writeFileSync(join(dir, 'targets', 'js.limbo.ts'), fileFromPage(page, 'targets/js.limbo.ts'));
  writeFileSync(join(dir, 'suite-kill.ts'), fileFromPage(page, 'suite-kill.ts'));
  return dir;
}

function limbo(cwd: string, args: string[], timeoutMs: number): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, LIMBO_PROMETHEUS: 'off', NO_COLOR: '1' },
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

test('client-adapters walk-through: limbo validate --target js says ok on the page’s target', (t) => {
  const dir = userFolder();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = limbo(dir, ['validate', '--target', 'js'], 60_000);
  assert.equal(r.status, 0, r.out);
  assert.match(
    r.out,
    /^ok: targets\/js\.limbo\.ts: js: 1 service \(nats-1 processor\); 1 link \(client->nats-1\)/m,
  );
  assert.match(r.out, /client: adapter jetstream/);
});

test(
  'client-adapters walk-through: limbo run suite-kill.ts --target js passes and leaves no nats-server',
  { skip: !installed && !required && 'nats-server is not installed (apt-get install nats-server)' },
  (t) => {
    assert.ok(installed, 'LIMBO_NATS_REQUIRED=1 but there is no nats-server on PATH');
    const dir = userFolder();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const r = limbo(dir, ['run', 'suite-kill.ts', '--target', 'js', '--seed', '1'], 120_000);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /js-kill \[js\] seed 1: PASS/);
    assert.match(r.out, /pass\s+noClientLeftHanging/);
    assert.match(r.out, /pass\s+faultsHitTraffic/);
    const left = spawnSync('pgrep', ['-f', `store_dir=${dir}`], { encoding: 'utf8' });
    assert.equal(left.stdout.trim(), '', `nats-server left running from ${dir}`);
  },
);

test('client-adapters walk-through: the page’s files type-check under the reader’s own strict tsconfig, limbo’s types from its declarations', (t) => {
  const dir = userFolder();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'node_modules', '@types'));
  symlinkSync(
    join(root, 'node_modules', '@types', 'node'),
    join(dir, 'node_modules', '@types', 'node'),
    'dir',
  );
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  // Settings stricter than limbo's own: a user's tsc must not type-check limbo's sources with them.
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: true,
        noEmit: true,
        types: ['node'],
      },
      include: ['targets/js.limbo.ts', 'suite-kill.ts'],
    }),
  );
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', dir, '--listFiles'], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  const out = `${r.stdout}${r.stderr}`;
  assert.equal(
    r.status,
    0,
    out
      .split('\n')
      .filter((l) => /error/.test(l))
      .slice(0, 5)
      .join('\n'),
  );
  // limbo came from its declarations, not from its sources.
  const fromLimbo = out.split('\n').filter((l) => l.includes('/node_modules/limbo/') || l.startsWith(root));
  assert.ok(
    fromLimbo.some((l) => l.endsWith('dist/src/index.d.ts')),
    fromLimbo.slice(0, 5).join('\n'),
  );
  assert.ok(
    !fromLimbo.some((l) => /\/src\/[^/]+.*\.ts$/.test(l) && !l.endsWith('.d.ts')),
    'no limbo source file was checked',
  );
});
