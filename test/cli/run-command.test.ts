// A finished command never hangs its caller: exitWith sets the exit code, lets the process end
// when its handles close, and exits after a bounded grace when something (a user's client
// adapter, a library's reconnect loop) keeps a handle open — saying so. Real child processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

const module = new URL('../../src/cli/run-command.js', import.meta.url).href;

function child(body: string): { status: number | null; stderr: string; ms: number } {
  const started = performance.now();
  const r = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `import { exitWith } from ${JSON.stringify(module)};\n${body}`],
    { encoding: 'utf8', timeout: 50_000 },
  );
  return { status: r.status, stderr: r.stderr, ms: performance.now() - started };
}

test('a handle left open after the command finished: the process exits with its code after the grace, saying why', () => {
  const r = child('exitWith(Promise.resolve(3), 300);\nsetInterval(() => {}, 1000);');
  assert.equal(r.status, 3);
  assert.match(r.stderr, /handles still open 300 ms after the command finished/);
  // A failed command keeps exit 1 through the same grace.
  const failed = child("exitWith(Promise.reject(new Error('boom')), 300);\nsetInterval(() => {}, 1000);");
  assert.equal(failed.status, 1);
  assert.match(failed.stderr, /limbo: Error: boom/);
});

test('nothing left open: the process ends at once with the code, no message', () => {
  const r = child('exitWith(Promise.resolve(0), 60_000);');
  assert.equal(r.status, 0);
  assert.equal(r.stderr, '');
  assert.ok(r.ms < 30_000, `took ${Math.round(r.ms)} ms (the grace is 60 s: it must not wait for it)`);
});
