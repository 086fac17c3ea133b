// Toxiproxy as a container (the Toxiproxy image when the engine has it, else the services
// image running `limbo proxy`): a proxy created through its API carries bytes between two
// real sockets on 127.0.0.1. The full acceptance suite runs against it in scripts/docker/ci.sh.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Toxiproxy } from 'toxiproxy-node-client';
import { removeRunContainers } from '../../src/runtime/docker.js';
import { startProxyContainer } from '../../src/runtime/docker-proxy.js';
import { dockerTestEnv } from '../helpers/docker.js';

const { skip } = await dockerTestEnv();
const runId = `proxy-${randomBytes(3).toString('hex')}`;
const runDir = mkdtempSync(join(tmpdir(), 'limbo-docker-proxy-'));
after(async () => {
  if (!skip) await removeRunContainers(runId);
  rmSync(runDir, { recursive: true, force: true });
});

test('a Toxiproxy container proxies a TCP connection on the host network', { skip }, async () => {
  const upstream = net.createServer((s) => s.pipe(s));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  await using proxy = await startProxyContainer({ name: 'toxiproxy', runDir, runId });
  try {
    assert.match(proxy.apiUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    const client = new Toxiproxy(proxy.apiUrl);
    const upstreamPort = (upstream.address() as net.AddressInfo).port;
    const created = await client.createProxy({
      name: `echo_${runId}`,
      listen: '127.0.0.1:0',
      upstream: `127.0.0.1:${upstreamPort}`,
    });
    const port = Number(created.listen.split(':').pop());
    assert.ok(port > 0, created.listen);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('through the container'));
      socket.setTimeout(10_000, () => socket.destroy(new Error('no echo within 10 s')));
      socket.once('data', (d) => {
        resolve(d.toString());
        socket.destroy();
      });
      socket.once('error', reject);
    });
    assert.equal(reply, 'through the container');
  } finally {
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  }
});
