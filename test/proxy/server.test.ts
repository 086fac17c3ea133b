// The embedded server itself: its /metrics counters move while traffic flows, stop()
// closes every listener and socket, thousands of proxies and connections are fine, and
// `limbo proxy` runs it standalone. (Not pointed at LIMBO_TOXIPROXY_URL: these are about
// the embedded server.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type net from 'node:net';
import { Toxiproxy } from 'toxiproxy-node-client';
import { startToxiproxyServer } from '../../src/proxy/server.js';
import { limboCommand, startProcess } from '../../src/runtime/process.js';
import { connect, echoRoundTrip, portOf, readUntilClose, startTestServer, uniqueName } from './helpers.js';

function counter(text: string, name: string, proxy: string, direction: string): number {
  for (const line of text.split('\n')) {
    if (
      line.startsWith(name + '{') &&
      line.includes(`proxy="${proxy}"`) &&
      line.includes(`direction="${direction}"`)
    )
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

test('/metrics byte counters move while a connection is live', async () => {
  await using server = await startToxiproxyServer({ port: 0 });
  await using echo = await startTestServer();
  const client = new Toxiproxy(server.url);
  const name = uniqueName('metrics');
  const proxy = await client.createProxy({ name, listen: '127.0.0.1:0', upstream: echo.address });
  const socket = await connect(portOf(proxy));
  try {
    await echoRoundTrip(socket, Buffer.alloc(1000, 1));
    const text = await (await fetch(server.metricsUrl)).text();
    assert.equal(counter(text, 'toxiproxy_proxy_received_bytes_total', name, 'upstream'), 1000);
    assert.equal(counter(text, 'toxiproxy_proxy_sent_bytes_total', name, 'upstream'), 1000);
    assert.equal(counter(text, 'toxiproxy_proxy_received_bytes_total', name, 'downstream'), 1000);
    assert.equal(counter(text, 'toxiproxy_proxy_sent_bytes_total', name, 'downstream'), 1000);
    assert.match(text, new RegExp(`listener="${proxy.listen.replace(/\./g, '\\.')}"`));
    assert.match(text, new RegExp(`upstream="${echo.address.replace(/\./g, '\\.')}"`));
    await echoRoundTrip(socket, Buffer.alloc(500, 2));
    const again = await (await fetch(server.metricsUrl)).text();
    assert.equal(counter(again, 'toxiproxy_proxy_sent_bytes_total', name, 'downstream'), 1500);
  } finally {
    socket.destroy();
  }
});

test('stop() closes the API, every listener and every connection', async () => {
  const server = await startToxiproxyServer({ port: 0 });
  await using echo = await startTestServer();
  const client = new Toxiproxy(server.url);
  const proxies = await Promise.all(
    [1, 2, 3].map((i) =>
      client.createProxy({ name: `stop${i}`, listen: '127.0.0.1:0', upstream: echo.address }),
    ),
  );
  const sockets = await Promise.all(proxies.map((p) => connect(portOf(p))));
  for (const s of sockets) assert.deepEqual(await echoRoundTrip(s, Buffer.from('x')), Buffer.from('x'));
  const closings = sockets.map((s) => readUntilClose(s, 5000));
  await server.stop();
  await Promise.all(closings);
  for (const p of proxies) await assert.rejects(connect(portOf(p)), /ECONNREFUSED/);
  await assert.rejects(fetch(`${server.url}/version`));
});

test('thousands of proxies and connections', async () => {
  await using server = await startToxiproxyServer({ port: 0 });
  await using echo = await startTestServer();
  const client = new Toxiproxy(server.url);
  const prefix = uniqueName('many');
  const count = 2000;
  const created = await client.populate(
    Array.from({ length: count }, (_v, i) => ({
      name: `${prefix}_${i}`,
      listen: '127.0.0.1:0',
      upstream: echo.address,
    })),
  );
  assert.equal(Object.keys(created).length, count);
  const one = created[`${prefix}_0`]!;
  const sockets: net.Socket[] = [];
  try {
    for (let i = 0; i < 1000; i += 100) {
      sockets.push(...(await Promise.all(Array.from({ length: 100 }, () => connect(portOf(one), 10_000)))));
    }
    const answers = await Promise.all(sockets.map((s, i) => echoRoundTrip(s, Buffer.from(`n${i}`), 20_000)));
    answers.forEach((a, i) => assert.equal(a.toString(), `n${i}`));
    const last = created[`${prefix}_${count - 1}`]!;
    const s = await connect(portOf(last));
    assert.equal((await echoRoundTrip(s, Buffer.from('last'))).toString(), 'last');
    s.destroy();
  } finally {
    for (const s of sockets) s.destroy();
  }
});

test('`limbo proxy` prints its ready line, serves the API and stops on SIGTERM', async () => {
  const cmd = limboCommand();
  const help = spawnSync(cmd.command, [...cmd.args, 'proxy', '--help'], {
    encoding: 'utf8',
    timeout: 15_000,
  });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--port/);
  assert.match(help.stdout, /--host/);
  const proc = await startProcess({
    name: 'proxy',
    command: cmd.command,
    args: [...cmd.args, 'proxy', '--port', '0'],
  });
  try {
    assert.equal(proc.ready.role, 'proxy');
    const api = proc.ready.addresses.api;
    assert.match(api ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(proc.ready.addresses.metrics, `${api}/metrics`);
    const client = new Toxiproxy(api!);
    await using echo = await startTestServer();
    const proxy = await client.createProxy({ name: 'cli', listen: '127.0.0.1:0', upstream: echo.address });
    const s = await connect(portOf(proxy));
    assert.equal((await echoRoundTrip(s, Buffer.from('via cli'))).toString(), 'via cli');
    const closing = readUntilClose(s, 10_000);
    proc.kill('SIGTERM');
    assert.equal(await proc.exited, 0);
    await closing;
  } finally {
    await proc.stop();
  }
});

test('toxicity is drawn per connection and direction from the injected random source', async () => {
  // Draws in order: each new connection draws once per toxic in its upstream link, then its
  // downstream link. One downstream toxic, toxicity 0.5: 0.9 misses, 0.1 hits.
  const draws = [0.9, 0.1, 0.9, 0.1];
  let next = 0;
  await using server = await startToxiproxyServer({ port: 0, random: () => draws[next++ % draws.length]! });
  await using echo = await startTestServer();
  const client = new Toxiproxy(server.url);
  const proxy = await client.createProxy({ name: 'seeded', listen: '127.0.0.1:0', upstream: echo.address });
  await proxy.addToxic({
    name: 'lat',
    type: 'latency',
    stream: 'downstream',
    toxicity: 0.5,
    attributes: { latency: 400, jitter: 0 },
  });
  const slow: boolean[] = [];
  for (let i = 0; i < 4; i++) {
    const s = await connect(portOf(proxy));
    const start = performance.now();
    await echoRoundTrip(s, Buffer.from('x'));
    slow.push(performance.now() - start >= 200); // 400 ms when the toxic hit, ~0 when it missed
    s.destroy();
  }
  assert.deepEqual(slow, [false, true, false, true]);
});
