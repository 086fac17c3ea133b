// `limbo up` as a user runs it: a child process that starts the topology, writes up.json,
// serves until SIGTERM, then leaves no service process and no up.json behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { limboCommand } from '../../src/runtime/process.js';
import type { UpFile } from '../../src/cli/up.js';
import { pidAlive } from '../../src/util/pid-alive.js';

test('limbo up starts a topology, describes it in up.json, and cleans up on SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-up-'));
  const cmd = limboCommand();
  const child = spawn(
    cmd.command,
    [...cmd.args, 'up', '--dir', dir, '--processors', '2', '--partitions', '2'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const upFile = join(dir, 'up.json');
    const deadline = Date.now() + 90_000;
    while (!existsSync(upFile) && Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(existsSync(upFile), `up.json written\n${output}`);
    const up = JSON.parse(readFileSync(upFile, 'utf8')) as UpFile;
    assert.equal(up.target, 'reference');

    const res = await fetch(`${up.ingressUrls[0]}/Echo/echo`, { method: 'POST', body: '{"up":1}' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { up: 1 });

    const proxies = (await (await fetch(`${up.toxiproxy.api}/proxies`)).json()) as Record<string, unknown>;
    for (const link of ['client->ingress', 'ingress->processor-1', 'processor-2->log', 'ingress->log']) {
      const name = up.toxiproxy.proxies[link];
      assert.ok(name !== undefined && proxies[name] !== undefined, `proxy for ${link}`);
    }
    for (const [name, url] of Object.entries(up.metrics)) {
      const m = await fetch(url);
      assert.equal(m.status, 200, name);
      await m.arrayBuffer();
    }
    assert.ok(up.services['log']?.pid, 'service pids listed');
    if (up.prometheus !== null) {
      const q = await fetch(`${up.prometheus}/api/v1/query?query=up`);
      assert.equal(q.status, 200);
      await q.arrayBuffer();
    }
    const pids = Object.values(up.services)
      .map((s) => s.pid)
      .filter((p): p is number => p !== null);

    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 30_000))]);
    assert.equal(code, 0, output);
    assert.ok(!existsSync(upFile), 'up.json removed');
    for (const pid of pids) assert.ok(!pidAlive(pid), `service ${pid} stopped`);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
