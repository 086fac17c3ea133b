// Links chosen by what they carry: linkInto and anyLink, against the embedded Toxiproxy server
// through real sockets, take a link that carried traffic since the baseline whenever one did —
// whatever the seed — and any link (seeded) when none did; kinds filter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Toxiproxy } from 'toxiproxy-node-client';
import { startToxiproxyServer } from '../../src/proxy/server.js';
import { createRandom } from '../../src/util/random.js';
import { scrape } from '../../src/telemetry/prom-text.js';
import {
  anyLink,
  describeLink,
  linkInto,
  proxyCountersOf,
  requirementsOf,
  selectLink,
  type FaultContext,
} from '../../src/faults/index.js';
import { startToyTarget } from '../helpers/toy-target.js';
import { startEcho } from '../helpers/echo.js';

function ping(address: string): Promise<void> {
  const [host, port] = address.split(':');
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), host, () => s.write('ping'));
    s.once('data', () => {
      s.destroy();
      resolve();
    });
    s.once('error', reject);
    setTimeout(() => {
      s.destroy();
      reject(new Error('no echo in 2 s'));
    }, 2000).unref();
  });
}

// Three dialers of processor-1 (one idle), one of processor-2, and the clients' link.
const links = {
  'client->processor-1': 'client->processor-1',
  'processor-2->processor-1': 'processor-2->processor-1',
  'processor-3->processor-1': 'processor-3->processor-1',
  'log->processor-1': 'log->processor-1',
  'processor-1->processor-2': 'processor-1->processor-2',
};

test('linkInto and anyLink prefer a link that carried traffic since the baseline', async (t) => {
  const server = await startToxiproxyServer({ host: '127.0.0.1', port: 0 });
  t.after(() => server.stop());
  const echo = await startEcho();
  t.after(() => echo.stop());
  const toxiproxy = new Toxiproxy(server.url);
  const listen = new Map<string, string>();
  for (const name of Object.keys(links))
    listen.set(
      name,
      (await toxiproxy.createProxy({ name, listen: '127.0.0.1:0', upstream: echo.address })).listen,
    );
  const toy = await startToyTarget(3);
  t.after(() => toy.stop());
  const read = async () => proxyCountersOf(await scrape(`${server.url}/metrics`));
  const ctx = (seed: number, baseline?: Awaited<ReturnType<typeof read>>): FaultContext => ({
    target: { ...toy, links, linkKinds: { 'log->processor-1': 'storage' }, toxiproxy },
    toxiproxy,
    random: createRandom(seed),
    proxyCounters: read,
    ...(baseline !== undefined ? { trafficBaseline: baseline } : {}),
  });

  // No baseline: any link into processor-1 but the clients', seeded.
  const seen = new Set<string>();
  for (let seed = 0; seed < 40; seed++) seen.add((await selectLink(ctx(seed), linkInto('processor-1'))).link);
  assert.deepEqual([...seen].sort(), [
    'log->processor-1',
    'processor-2->processor-1',
    'processor-3->processor-1',
  ]);

  // Traffic on processor-3->processor-1 only, after the baseline: it is the one chosen, every seed.
  const baseline = await read();
  await ping(listen.get('processor-3->processor-1')!);
  await ping(listen.get('client->processor-1')!);
  for (let seed = 0; seed < 20; seed++) {
    assert.equal(
      (await selectLink(ctx(seed, baseline), linkInto('processor-1'))).link,
      'processor-3->processor-1',
    );
    assert.equal((await selectLink(ctx(seed, baseline), anyLink())).link, 'processor-3->processor-1');
  }
  // A kind keeps only links of that kind, busy or not.
  assert.equal((await selectLink(ctx(1, baseline), anyLink({ kind: 'storage' }))).link, 'log->processor-1');
  assert.equal(
    (await selectLink(ctx(1, baseline), linkInto('processor-1', { kind: 'storage' }))).link,
    'log->processor-1',
  );
  await assert.rejects(
    selectLink(ctx(1, baseline), anyLink({ kind: 'nope' })),
    /no nope link between services/,
  );
});

test('describe and requirements of the link selectors', () => {
  assert.equal(describeLink(anyLink()), 'any()');
  assert.equal(describeLink(anyLink({ kind: 'peer' })), 'any(peer)');
  assert.equal(describeLink(linkInto('node-1', { kind: 'peer' })), 'into(node-1:peer)');
  assert.deepEqual(requirementsOf('any(peer)'), [{ kind: 'linkInto' }]);
  assert.deepEqual(requirementsOf('into(leaderOf(0):peer)'), [{ kind: 'linkInto' }, { kind: 'leader' }]);
  assert.deepEqual(requirementsOf('ingress->leaderOf(0)'), [
    { kind: 'linkFrom', from: 'ingress' },
    { kind: 'leader' },
  ]);
});
