import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { linkNames } from '../../src/targets/reference.js';
import { openToxiproxy, ToxiproxyUnavailableError } from '../../src/runtime/toxiproxy.js';
import { createTarget, targetNames } from '../../src/targets/registry.js';

test('the reference topology has one proxy per link a suite may touch', () => {
  assert.deepEqual(linkNames({ processors: 2, partitions: 4 }), [
    'client->ingress',
    'ingress->log',
    'ingress->processor-1',
    'processor-1->log',
    'ingress->processor-2',
    'processor-2->log',
  ]);
  assert.deepEqual(linkNames({ processors: 1, partitions: 1, ingresses: 2 }).slice(0, 2), [
    'client->ingress-1',
    'client->ingress-2',
  ]);
  assert.deepEqual(targetNames(), ['reference', 'reference:legacy', 'restate']);
  assert.equal(createTarget('reference:legacy').name, 'reference:legacy');
});

test('a Toxiproxy URL that does not answer is a clear error', async () => {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  await assert.rejects(openToxiproxy(`http://127.0.0.1:${port}`), ToxiproxyUnavailableError);
  await assert.rejects(
    openToxiproxy(undefined, { env: { LIMBO_TOXIPROXY_URL: `http://127.0.0.1:${port}` } }),
    /no Toxiproxy answers/,
  );
});
