// A fault's evidence from three readings of the proxies' counters: bytes in the directions it
// hurts and dials inside its window, connections closed as it went in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  evidenceOf,
  proxiesTouching,
  proxyCountersOf,
  type ProxyCounter,
} from '../../src/faults/evidence.js';
import { parsePrometheusText } from '../../src/telemetry/prom-text.js';

const at = (entries: Record<string, ProxyCounter>): Map<string, ProxyCounter> =>
  new Map(Object.entries(entries));

test('proxyCountersOf reads the byte counters per direction and the connection counters', () => {
  const text = [
    'toxiproxy_proxy_received_bytes_total{direction="upstream",listener="127.0.0.1:1",proxy="a",upstream="x"} 10',
    'toxiproxy_proxy_received_bytes_total{direction="downstream",listener="127.0.0.1:1",proxy="a",upstream="x"} 25',
    'toxiproxy_proxy_sent_bytes_total{direction="downstream",listener="127.0.0.1:1",proxy="a",upstream="x"} 99',
    'limbo_proxy_connections_total{proxy="a",event="opened"} 3',
    'limbo_proxy_connections_total{proxy="a",event="closed"} 1',
    'toxiproxy_proxy_received_bytes_total{direction="upstream",listener="127.0.0.1:2",proxy="b",upstream="y"} 7',
  ].join('\n');
  const c = proxyCountersOf(parsePrometheusText(text));
  assert.deepEqual(c.get('a'), { upstream: 10, downstream: 25, opened: 3, closed: 1 });
  assert.deepEqual(c.get('b'), { upstream: 7, downstream: 0 }, 'a real Toxiproxy: no connection counters');
});

test('only bytes in the fault’s directions, inside its window, count', () => {
  const plan = { proxies: ['a'], directions: ['downstream' as const] };
  const before = at({ a: { upstream: 0, downstream: 0, opened: 1, closed: 0 } });
  const inAt = at({ a: { upstream: 100, downstream: 50, opened: 1, closed: 0 } });
  const upOnly = at({ a: { upstream: 900, downstream: 50, opened: 1, closed: 0 } });
  const e = evidenceOf(plan, before, inAt, upOnly);
  assert.equal(
    e.bytes,
    0,
    'upstream bytes do not meet a downstream toxic; bytes before the inject do not count',
  );
  assert.equal(e.connectionsOpened, 0);
  const down = evidenceOf(
    plan,
    before,
    inAt,
    at({ a: { upstream: 900, downstream: 80, opened: 1, closed: 0 } }),
  );
  assert.equal(down.bytes, 30);
});

test('connections dialled inside the window and connections cut by the inject are counted', () => {
  const plan = { proxies: ['a', 'b'], directions: ['upstream' as const, 'downstream' as const] };
  const before = at({ a: { upstream: 5, downstream: 5, opened: 2, closed: 0 } });
  const inAt = at({ a: { upstream: 5, downstream: 5, opened: 2, closed: 2 } });
  const out = at({
    a: { upstream: 5, downstream: 5, opened: 2, closed: 2 },
    b: { upstream: 0, downstream: 0, opened: 4, closed: 4 },
  });
  const e = evidenceOf(plan, before, inAt, out);
  assert.deepEqual(
    { bytes: e.bytes, opened: e.connectionsOpened, cut: e.connectionsCut },
    { bytes: 0, opened: 4, cut: 2 },
  );
});

test('a reading that failed leaves the evidence unavailable, with the reason', () => {
  const e = evidenceOf(
    { proxies: ['a'], directions: ['upstream'] },
    undefined,
    undefined,
    at({}),
    'timed out',
  );
  assert.equal(e.unavailable, 'timed out');
});

test('proxiesTouching: every link into and out of a service, shared and role-named links included', () => {
  const links = {
    'client->ingress': 'client->ingress',
    'ingress->log': 'ingress->log',
    'ingress->processor-1': 'ingress->processor-1',
    'ingress->processor-2': 'ingress->processor-2',
    'processor-1->log': 'processor-1->log',
    'processor-2->log': 'processor-2->log',
    '*->node-3': 'shared-3',
  };
  assert.deepEqual(proxiesTouching(links, 'processor-1'), ['ingress->processor-1', 'processor-1->log']);
  assert.deepEqual(proxiesTouching(links, 'ingress-1'), [
    'client->ingress',
    'ingress->log',
    'ingress->processor-1',
    'ingress->processor-2',
  ]);
  assert.deepEqual(proxiesTouching(links, 'node-3'), ['shared-3']);
  assert.deepEqual(proxiesTouching(links, 'node-1'), []);
});

test('a dial whose upstream is down counts as a dial on the embedded server', async (t) => {
  const { startToxiproxyServer } = await import('../../src/proxy/server.js');
  const { scrape } = await import('../../src/telemetry/prom-text.js');
  const net = await import('node:net');
  const server = await startToxiproxyServer({ host: '127.0.0.1', port: 0 });
  t.after(() => server.stop());
  // An upstream port nothing listens on: take a free one and close it again.
  const free = net.createServer();
  await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
  const deadPort = (free.address() as import('node:net').AddressInfo).port;
  await new Promise((r) => free.close(r));
  const res = await fetch(`${server.url}/proxies`, {
    method: 'POST',
    body: JSON.stringify({ name: 'client->down', listen: '127.0.0.1:0', upstream: `127.0.0.1:${deadPort}` }),
  });
  const { listen } = (await res.json()) as { listen: string };
  const read = async () => proxyCountersOf(await scrape(`${server.url}/metrics`));
  const before = await read();
  const [host, port] = listen.split(':');
  await new Promise<void>((resolve) => {
    const s = net.connect(Number(port), host, () => s.write('GET / HTTP/1.1\r\n\r\n'));
    s.on('close', () => resolve());
    s.on('error', () => {});
  });
  const after = await read();
  const e = evidenceOf(
    { proxies: ['client->down'], directions: ['upstream', 'downstream'] },
    before,
    before,
    after,
  );
  assert.equal(e.connectionsOpened, 1, JSON.stringify(e));
});
