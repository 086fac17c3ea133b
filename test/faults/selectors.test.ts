// Links chosen by what they carry: linkInto and anyLink, against the embedded Toxiproxy server
// through real sockets, take a link that carries traffic now (the last few seconds) when one
// does, else one that carried traffic since the baseline — whatever the seed — and any link
// (seeded) when none did; kinds filter.
import { test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Toxiproxy } from 'toxiproxy-node-client';
import { startToxiproxyServer } from '../../src/proxy/server.js';
import { createRandom } from '../../src/util/random.js';
import { scrape } from '../../src/telemetry/prom-text.js';
import {
  anyLink,
  describeLink,
  latency,
  linkInto,
  proxyCountersOf,
  recordTraffic,
  RECENT_TRAFFIC_MS,
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

/** The embedded Toxiproxy with a proxy per link (all to one echo server), a toy target, and a counter reader. */
async function startLinks(t: TestContext) {
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
  /** A fault context over these links at `seed`, with `more` (a baseline, the recent view). */
  const context = (seed: number, more: Partial<FaultContext> = {}): FaultContext => ({
    target: { ...toy, links, toxiproxy },
    toxiproxy,
    random: createRandom(seed),
    proxyCounters: read,
    ...more,
  });
  return { toxiproxy, listen, toy, read, context };
}

test('linkInto and anyLink prefer a link that carried traffic since the baseline', async (t) => {
  const { toxiproxy, listen, toy, read } = await startLinks(t);
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

test('linkInto: when only a link the service dialled itself carried traffic, that one is chosen and a toxic on it hurts the other stream', async (t) => {
  const { toxiproxy, listen, read, context } = await startLinks(t);
  const baseline = await read();
  // processor-1 dialled processor-2 (one connection per pair): nothing moved on any link into processor-1.
  await ping(listen.get('processor-1->processor-2')!);
  await ping(listen.get('client->processor-1')!);
  const ctx = (seed: number): FaultContext => context(seed, { trafficBaseline: baseline });
  for (let seed = 0; seed < 10; seed++) {
    const sel = await selectLink(ctx(seed), linkInto('processor-1'));
    assert.deepEqual([sel.link, sel.reversed], ['processor-1->processor-2', true]);
  }
  // A latency toxic asked for downstream (server → dialer) goes upstream there: bytes into processor-1.
  const injected = await latency(linkInto('processor-1'), { latencyMs: 10 }).inject(ctx(1));
  assert.equal(injected.details?.['stream'], 'upstream');
  const toxic = await (
    await toxiproxy.get('processor-1->processor-2')
  ).getToxic(String(injected.details?.['toxic']));
  assert.equal(toxic.stream, 'upstream');
  // With traffic into processor-1 as well, a link into it wins again.
  await ping(listen.get('processor-2->processor-1')!);
  const again = await selectLink(ctx(1), linkInto('processor-1'));
  assert.deepEqual([again.link, again.reversed], ['processor-2->processor-1', undefined]);
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

test('a link busy in the warm-up that went quiet since loses to one busy now; with none busy now, the warm-up decides', async (t) => {
  const { listen, read, context } = await startLinks(t);
  const baseline = await read();
  // Warm-up: processor-3 talked to processor-1, then went quiet (say an earlier fault killed it).
  await ping(listen.get('processor-3->processor-1')!);
  const recent = recordTraffic(read, { intervalMs: 100 });
  t.after(() => recent.stop());
  const ctx = (seed: number): FaultContext =>
    context(seed, { trafficBaseline: baseline, recentTraffic: recent });
  // Nothing moved in the last 2 s: the warm-up's busy link is the one.
  await delay(RECENT_TRAFFIC_MS + 300);
  for (let seed = 0; seed < 10; seed++)
    assert.equal((await selectLink(ctx(seed), linkInto('processor-1'))).link, 'processor-3->processor-1');
  // Now processor-2 talks to processor-1: it carries the traffic now, every seed.
  await ping(listen.get('processor-2->processor-1')!);
  for (let seed = 0; seed < 10; seed++) {
    assert.equal((await selectLink(ctx(seed), linkInto('processor-1'))).link, 'processor-2->processor-1');
    assert.equal((await selectLink(ctx(seed), anyLink())).link, 'processor-2->processor-1');
  }
  // Without the recent view, both were busy since the warm-up: the seed picks between them.
  const seen = new Set<string>();
  for (let seed = 0; seed < 30; seed++) {
    const { recentTraffic: _, ...old } = ctx(seed);
    seen.add((await selectLink(old, linkInto('processor-1'))).link);
  }
  assert.deepEqual([...seen].sort(), ['processor-2->processor-1', 'processor-3->processor-1']);
});
