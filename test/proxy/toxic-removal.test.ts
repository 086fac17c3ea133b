// Removing a toxic from a live connection runs its cleanup when it acted on that connection at
// any time, not only when it acts at the moment of removal. An update re-draws toxicity, so a
// `timeout` that swallowed bytes and was then redrawn as a pass-through used to be removed
// without closing its connection: the swallowed bytes were gone and the client waited forever.
// And a toxic change never waits on a connection for ever: one not rewired within the bound is
// reset, so the API's lock is let go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Toxiproxy } from 'toxiproxy-node-client';
import { startToxiproxyServer } from '../../src/proxy/server.js';
import { Proxy } from '../../src/proxy/proxy.js';
import type { ToxicConfig, ToxicDefinition } from '../../src/proxy/toxic.js';
import { silentLogger } from '../../src/telemetry/logger.js';
import { connect, portOf, startTestServer } from './helpers.js';

test('a timeout that swallowed bytes closes its connection when removed, even after an update redrew it as a miss', async () => {
  await using echo = await startTestServer();
  // Draws: the connection's first roll hits (0.1 < 0.5), the roll after the update misses.
  const draws = [0.1, 0.9];
  await using server = await startToxiproxyServer({ port: 0, random: () => draws.shift() ?? 0.9 });
  const client = new Toxiproxy(server.url);
  const proxy = await client.createProxy({ name: 'swallow', listen: '127.0.0.1:0', upstream: echo.address });
  const toxic = await proxy.addToxic({
    name: 'hole',
    type: 'timeout',
    stream: 'downstream',
    toxicity: 0.5,
    attributes: { timeout: 0 },
  });
  const socket = await connect(portOf(proxy));
  const closed = once(socket, 'close');
  let received = 0;
  socket.on('data', (d: Buffer) => (received += d.length));
  socket.on('error', () => {});
  socket.write('swallowed');
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(received, 0, 'the echo was swallowed by the timeout');
  await toxic.update({ ...toxic.toJson(), attributes: { timeout: 0 } });
  assert.equal(draws.length, 0, 'the update redrew toxicity on the connection');
  await toxic.remove();
  const outcome = await Promise.race([
    closed.then(() => 'closed'),
    new Promise((r) => setTimeout(() => r('still open'), 2000)),
  ]);
  socket.destroy();
  assert.equal(outcome, 'closed', 'removing the timeout closed the connection whose bytes it swallowed');
});

test('a connection whose toxic never lets go is reset after the bound, and the removal answers', async () => {
  await using echo = await startTestServer();
  // A toxic plugin that ignores interruption: its pipe never returns.
  const stubborn: ToxicDefinition = {
    type: 'stubborn',
    attributes: [],
    create: () => ({ pipe: () => new Promise<void>(() => {}) }),
  };
  const proxy = new Proxy('stubborn', '127.0.0.1:0', echo.address, {
    random: () => 0,
    logger: silentLogger,
    onReceived: () => {},
    onSent: () => {},
    onEvent: () => {},
    rewireBoundMs: 300,
  });
  await proxy.start();
  try {
    const config: ToxicConfig = {
      name: 'stubborn',
      type: 'stubborn',
      stream: 'downstream',
      toxicity: 1,
      attributes: {},
      definition: stubborn,
    };
    await proxy.addToxic(config);
    const socket = await connect(portOf(proxy));
    socket.on('error', () => {});
    const closed = new Promise((resolve) => socket.once('close', resolve));
    const deadline = Date.now() + 5000;
    while (proxy.connectionCount === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(proxy.connectionCount, 1);
    const started = performance.now();
    await proxy.removeToxic(config);
    const tookMs = performance.now() - started;
    assert.ok(tookMs < 2000, `the removal answered in ${tookMs.toFixed(0)} ms`);
    await closed;
    assert.equal(proxy.connectionCount, 0, 'the connection that could not be rewired was closed');
  } finally {
    await proxy.stop();
  }
});
