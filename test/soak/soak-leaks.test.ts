// The soak's leak probes against real things: a listening socket, open files, a child
// process, a temp entry and a toxic on a real (embedded) Toxiproxy, each seen as a leak
// while it exists and not once it is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { leaksBetween, snapshot, type LeakProbe } from '../../src/soak/soak-leaks.js';
import { startToxiproxyServer } from '../../src/proxy/server.js';

test('each kind of leak is seen while it exists and not once it is gone', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'limbo-leaks-test-'));
  await using toxiproxy = await startToxiproxyServer({ port: 0 });
  const probe: LeakProbe = { tmpDir: tmp, markers: [tmp], toxiproxyUrl: toxiproxy.url, fdSlack: 8 };
  try {
    const before = await snapshot(probe);
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const fds = Array.from({ length: 20 }, () => openSync(join(tmp, '..'), 'r'));
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    mkdirSync(join(tmp, 'left-behind'));
    const post = (path: string, body: unknown): Promise<Response> =>
      fetch(toxiproxy.url + path, { method: 'POST', body: JSON.stringify(body) });
    assert.equal(
      (await post('/proxies', { name: 'p', listen: '127.0.0.1:0', upstream: '127.0.0.1:1' })).status,
      201,
    );
    assert.equal(
      (await post('/proxies/p/toxics', { type: 'latency', name: 't', attributes: { latency: 1 } })).status,
      200,
    );

    const during = leaksBetween(before, await snapshot(probe), probe.fdSlack);
    const kinds = during.map((l) => l.kind);
    assert.ok(kinds.includes('process'), JSON.stringify(during));
    assert.ok(
      during.some((l) => l.kind === 'port' && l.detail.includes(`port ${port} `)),
      JSON.stringify(during),
    );
    assert.ok(kinds.includes('fds'), JSON.stringify(during));
    assert.ok(
      during.some((l) => l.kind === 'temp' && l.detail.includes('left-behind')),
      JSON.stringify(during),
    );
    assert.ok(
      during.some((l) => l.detail === 'toxiproxy p/t'),
      JSON.stringify(during),
    );
    assert.ok(
      during.some((l) => l.detail === 'toxiproxy p'),
      JSON.stringify(during),
    );

    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await new Promise<void>((r) => server.close(() => r()));
    for (const fd of fds) closeSync(fd);
    rmSync(join(tmp, 'left-behind'), { recursive: true });
    assert.equal((await fetch(toxiproxy.url + '/reset', { method: 'POST' })).status, 204);
    assert.equal((await fetch(toxiproxy.url + '/proxies/p', { method: 'DELETE' })).status, 204);
    assert.deepEqual(leaksBetween(before, await snapshot(probe), probe.fdSlack), []);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
