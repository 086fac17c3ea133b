// POST /reset: every proxy enabled, every toxic removed, listen ports and live connections
// kept. /reset touches every proxy on the server, so against a shared external server
// (LIMBO_TOXIPROXY_URL) it would disturb the other files running in parallel: there it runs
// only with LIMBO_TOXIPROXY_ALLOW_RESET=1, e.g. `node --test dist/test/proxy/reset.test.js`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createProxy, echoRoundTrip, portOf, useTargetAndEcho } from './helpers.js';

const skip =
  (process.env.LIMBO_TOXIPROXY_URL ?? '') !== '' && process.env.LIMBO_TOXIPROXY_ALLOW_RESET !== '1'
    ? 'resets a shared server: set LIMBO_TOXIPROXY_ALLOW_RESET=1 and run this file alone'
    : false;

const fx = useTargetAndEcho();

test(
  '/reset keeps listen ports and live connections, enables proxies and removes toxics',
  { skip },
  async () => {
    const proxy = await createProxy(fx.target, fx.echo.address, 'reset');
    try {
      const socket = await connect(portOf(proxy));
      assert.deepEqual(await echoRoundTrip(socket, Buffer.from('one')), Buffer.from('one'));
      await proxy.addToxic({
        name: 'lat',
        type: 'latency',
        stream: 'downstream',
        toxicity: 1,
        attributes: { latency: 50, jitter: 0 },
      });
      await fx.target.client.reset();
      const after = await fx.target.client.get(proxy.name);
      assert.equal(after.listen, proxy.listen);
      assert.equal(after.enabled, true);
      const toxics = (await (
        await fetch(`${fx.target.url}/proxies/${proxy.name}/toxics`)
      ).json()) as unknown[];
      assert.deepEqual(toxics, []);
      assert.deepEqual(await echoRoundTrip(socket, Buffer.from('two')), Buffer.from('two'));
      socket.destroy();
      // A disabled proxy is enabled by /reset.
      await after.update({ ...after.toJson(), enabled: false });
      await fx.target.client.reset();
      const again = await fx.target.client.get(proxy.name);
      assert.equal(again.enabled, true);
      assert.equal(again.listen, proxy.listen);
    } finally {
      await proxy.remove();
    }
  },
);
