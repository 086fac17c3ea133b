// `limbo soak` end to end, as a user runs it (the CLI in a child process): a tiny soak of one
// real suite on the reference cluster comes out clean, and a suite that leaves a child
// process and a temp dir behind is caught (exit 1, both leaks named, then reclaimed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCommand } from '../../src/targets/declarative/validate.js';
import { processRuns } from '../helpers/process-state.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const leakySuite = join(root, 'test/soak/fixtures/leaky-suite.ts');

async function soak(
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; out: string }> {
  const out = mkdtempSync(join(tmpdir(), 'limbo-soak-test-'));
  const child = spawn(process.execPath, [join(root, 'bin/limbo.js'), 'soak', ...args, '--out', out], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.resume();
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, out };
}

const running = processRuns;

interface SoakJson {
  total: { runs: number; hung: number; leaks: number; errors: number };
  runs: { leaks: { kind: string; detail: string }[] }[];
}

test('a tiny soak (1 seed, 1 suite) on reference is clean and prints the table', async () => {
  const r = await soak([join(root, 'chaos/startup-race.ts'), '--seeds', '1', '--seed', '11'], 120_000);
  try {
    assert.equal(r.code, 0, r.stdout);
    assert.match(r.stdout, /suite\s+runs\s+hung\s+lost\s+duplicated\s+leaks\s+false alarms\s+errors/);
    assert.match(r.stdout, /\nstartup-race\s+1\s+0\s+0\s+0\s+0\s+0\s+0\s/);
    assert.match(r.stdout, /soak: clean/);
    const json = JSON.parse(readFileSync(join(r.out, 'soak.json'), 'utf8')) as SoakJson;
    assert.deepEqual([json.total.runs, json.total.hung, json.total.leaks, json.total.errors], [1, 0, 0, 0]);
  } finally {
    rmSync(r.out, { recursive: true, force: true });
  }
});

test('a suite that leaves a child process and a temp dir behind is caught, and they are reclaimed', async () => {
  const r = await soak([leakySuite, '--seeds', '1', '--seed', '5', '--settle-ms', '1000'], 120_000);
  try {
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /LEAK pid \d+: sleep 60/);
    assert.match(r.stdout, /LEAK temp limbo-leaky-/);
    assert.match(r.stdout, /soak: NOT clean/);
    const json = JSON.parse(readFileSync(join(r.out, 'soak.json'), 'utf8')) as SoakJson;
    const kinds = json.runs.flatMap((run) => run.leaks.map((l) => l.kind)).sort();
    assert.deepEqual(kinds, ['process', 'temp']);
    // Reclaimed once counted: the leaked child is gone.
    const pid = Number(/LEAK pid (\d+)/.exec(r.stdout)?.[1]);
    assert.equal(running(pid), false, `pid ${pid} was reclaimed`);
  } finally {
    rmSync(r.out, { recursive: true, force: true });
  }
});

const etcdInstalled = findCommand('etcd') !== undefined;

test(
  'on a declared target, a suite it cannot serve is skipped with the reason, never run as a false alarm',
  { skip: !etcdInstalled && process.env.LIMBO_ETCD_REQUIRED !== '1' && 'etcd is not installed' },
  async () => {
    // log-kill names the service `log`, which etcd's declaration lacks: skipped before anything
    // starts (it used to run as a skipped verdict and count as a false alarm), so nothing ran.
    const r = await soak(
      [join(root, 'chaos/log-kill.ts'), '--target', 'etcd', '--seeds', '2', '--seed', '3'],
      60_000,
    );
    try {
      assert.equal(r.code, 2, r.stdout);
      assert.match(r.stdout, /skipped log-kill: .*\blog\b/);
      assert.doesNotMatch(r.stdout, /\[1\/\d+\] log-kill/, 'log-kill did not run');
      assert.doesNotMatch(r.stdout, /FALSE ALARM/);
      const json = JSON.parse(readFileSync(join(r.out, 'soak.json'), 'utf8')) as SoakJson & {
        skipped: { suite: string; reason: string }[];
      };
      assert.deepEqual(
        json.skipped.map((s) => s.suite),
        ['log-kill'],
      );
      assert.equal(json.total.runs, 0);
    } finally {
      rmSync(r.out, { recursive: true, force: true });
    }
  },
);

test('bad flags exit 2 naming the flag', async () => {
  const r = await soak(['--seeds', 'many'], 30_000);
  try {
    assert.equal(r.code, 2);
  } finally {
    rmSync(r.out, { recursive: true, force: true });
  }
});
