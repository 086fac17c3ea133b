// isolate against the embedded Toxiproxy server, through real sockets: every link into and
// out of the service stops carrying bytes while it is in, links elsewhere keep working, the
// heal restores each one; the inbound and outbound halves, kinds and the shared-proxy rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Toxiproxy } from 'toxiproxy-node-client';
import { startToxiproxyServer } from '../../src/proxy/server.js';
import { createRandom } from '../../src/util/random.js';
import { createFault, type FaultContext } from '../../src/faults/index.js';
import { isolate, linksToCut } from '../../src/faults/isolate.js';
import { startToyTarget } from '../helpers/toy-target.js';
import { startEcho } from '../helpers/echo.js';

/** True when a small message comes back through `address` within `timeoutMs`. */
function echoes(address: string, timeoutMs: number): Promise<boolean> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const s = net.connect(Number(port), host, () => s.write('ping'));
    const timer = setTimeout(() => {
      s.destroy();
      resolve(false);
    }, timeoutMs);
    s.once('data', () => {
      clearTimeout(timer);
      s.destroy();
      resolve(true);
    });
    s.once('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

function connected(address: string): Promise<net.Socket> {
  const [host, port] = address.split(':');
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), host, () => resolve(s));
    s.once('error', reject);
  });
}

/** The first data the socket receives within `timeoutMs`, as text, or undefined. */
function firstData(s: net.Socket, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    s.once('data', (d: Buffer) => {
      clearTimeout(timer);
      resolve(d.toString());
    });
    s.once('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
}

// processor-1's links: in from the client and from processor-2, out to processor-2, out to
// processor-3 through the proxy every dialer of processor-3 shares; one link not touching it.
const links = {
  'client->processor-1': 'client->processor-1',
  'processor-2->processor-1': 'processor-2->processor-1',
  'processor-1->processor-2': 'processor-1->processor-2',
  '*->processor-3': '*->processor-3',
  'processor-2->log': 'processor-2->log',
};

test('isolate cuts every link into and out of the service, and only those; the heal restores them', async (t) => {
  const server = await startToxiproxyServer({ host: '127.0.0.1', port: 0 });
  t.after(() => server.stop());
  const echo = await startEcho();
  t.after(() => echo.stop());
  const toxiproxy = new Toxiproxy(server.url);
  const listen = new Map<string, string>();
  for (const name of Object.keys(links)) {
    const p = await toxiproxy.createProxy({ name, listen: '127.0.0.1:0', upstream: echo.address });
    listen.set(name, p.listen);
  }
  const toy = await startToyTarget(3);
  t.after(() => toy.stop());
  const ctx: FaultContext = {
    target: { ...toy, links, linkKinds: { 'client->processor-1': 'client' }, toxiproxy },
    toxiproxy,
    random: createRandom(1),
  };
  for (const name of Object.keys(links)) assert.ok(await echoes(listen.get(name)!, 2000), `${name} before`);

  const fault = isolate('processor-1');
  const injected = await fault.inject(ctx);
  assert.deepEqual(injected.details?.['links'], [
    'client->processor-1',
    'processor-1->processor-2',
    'processor-2->processor-1',
  ]);
  assert.deepEqual(injected.details?.['notCut'], ['*->processor-3']);
  assert.deepEqual(injected.evidence?.proxies, [
    'client->processor-1',
    'processor-1->processor-2',
    'processor-2->processor-1',
  ]);
  for (const name of ['client->processor-1', 'processor-2->processor-1', 'processor-1->processor-2'])
    assert.equal(await echoes(listen.get(name)!, 300), false, `${name} is cut`);
  for (const name of ['*->processor-3', 'processor-2->log'])
    assert.equal(await echoes(listen.get(name)!, 2000), true, `${name} still carries`);

  await fault.heal(ctx, injected);
  await fault.heal(ctx, injected); // a second attempt of the same heal finds nothing left: fine
  for (const name of Object.keys(links)) assert.ok(await echoes(listen.get(name)!, 2000), `${name} after`);
  for (const name of Object.keys(links)) {
    const toxics = await fetch(`${server.url}/proxies/${encodeURIComponent(name)}/toxics`);
    assert.deepEqual(await toxics.json(), [], `no toxic left on ${name}`);
  }

  // hold (the default) keeps what was sent during the cut and delivers it at the heal, on the
  // same connection, as TCP does across a real partition; drop throws it away.
  for (const how of ['hold', 'drop'] as const) {
    const f = createFault('isolate', { on: 'processor-1', how });
    const sock = await connected(listen.get('client->processor-1')!);
    const i = await f.inject(ctx);
    const answer = firstData(sock, 3000);
    sock.write('during the cut');
    await new Promise((r) => setTimeout(r, 300));
    await f.heal(ctx, i);
    assert.equal(await answer, how === 'hold' ? 'during the cut' : undefined, how);
    sock.destroy();
  }

  // refuse: the proxies disabled, the dial refused; enabled again by the heal
  const refuse = createFault('isolate', { on: 'processor-1', direction: 'inbound', how: 'refuse' });
  const r = await refuse.inject(ctx);
  assert.deepEqual(r.details?.['disabled'], ['client->processor-1', 'processor-2->processor-1']);
  assert.equal(await echoes(listen.get('client->processor-1')!, 1000), false);
  assert.equal(await echoes(listen.get('processor-1->processor-2')!, 2000), true, 'outbound untouched');
  await refuse.heal(ctx, r);
  assert.equal(await echoes(listen.get('client->processor-1')!, 2000), true);
});

test('linksToCut: inbound and outbound halves, kinds, and shared proxies left alone outbound', () => {
  const target = { links, linkKinds: { 'client->processor-1': 'client' } };
  const cut = (o: Parameters<typeof linksToCut>[2]) => linksToCut({ target } as never, 'processor-1', o);
  assert.deepEqual(
    cut({ direction: 'inbound' }).cut.map((c) => c.link),
    ['client->processor-1', 'processor-2->processor-1'],
  );
  assert.deepEqual(cut({ direction: 'inbound' }).notCut, []);
  assert.deepEqual(
    cut({ direction: 'outbound' }).cut.map((c) => c.link),
    ['processor-1->processor-2'],
  );
  assert.deepEqual(cut({ direction: 'outbound' }).notCut, ['*->processor-3']);
  assert.deepEqual(
    cut({ kinds: ['peer'] }).cut.map((c) => c.link),
    ['processor-1->processor-2', 'processor-2->processor-1'],
  );
  // The shared proxy into processor-3 is processor-3's inbound: isolating it cuts it.
  assert.deepEqual(
    linksToCut({ target } as never, 'processor-3', {}).cut.map((c) => c.link),
    ['*->processor-3'],
  );
  assert.throws(
    () => createFault('isolate', { on: 'processor-1', direction: 'sideways' }),
    /direction must be both, inbound or outbound/,
  );
  assert.throws(
    () => createFault('isolate', { on: 'processor-1', how: 'eat' }),
    /how must be hold, drop or refuse/,
  );
});
