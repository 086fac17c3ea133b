// limbo's extensions beyond Toxiproxy 2.12 (docs/proxy.md): seeded toxicity, toxicity 0
// never acting, toxics in POST /populate, GET /events, the connection and toxic counters,
// packet_loss. They exist only in the embedded server, so each test starts its own and the
// file is skipped against a real server (LIMBO_TOXIPROXY_URL).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startToxiproxyServer } from '../../src/proxy/server.js';
import type { ProxyEvent } from '../../src/proxy/proxy-events.js';
import { limboCommand, startProcess } from '../../src/runtime/process.js';
import {
  connect,
  echoRoundTrip,
  portOf,
  readUntilClose,
  sleepMs,
  startTestServer,
  withTimeout,
} from './helpers.js';

const external = (process.env.LIMBO_TOXIPROXY_URL ?? '') !== '';
const skip = external ? 'limbo extensions: not in Toxiproxy 2.12' : false;

async function call(
  server: { url: string },
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown; text: string }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

async function eventsOf(server: { url: string }, since = 0): Promise<ProxyEvent[]> {
  const r = await call(server, 'GET', `/events?since=${since}`);
  assert.equal(r.status, 200, r.text);
  return (r.json as { events: ProxyEvent[] }).events;
}

/** Which of `n` sequential connections a toxicity-0.5 toxic hit, on the server at `server.url`. */
async function hitsOn(server: { url: string }, n: number, upstream: string): Promise<number[]> {
  const r = await call(server, 'POST', '/proxies', { name: 'p', listen: '127.0.0.1:0', upstream });
  const port = portOf(r.json as { listen: string });
  await call(server, 'POST', '/proxies/p/toxics', {
    type: 'latency',
    toxicity: 0.5,
    attributes: { latency: 0 },
  });
  for (let i = 0; i < n; i++) {
    const s = await connect(port);
    await echoRoundTrip(s, Buffer.from('x'));
    s.destroy();
  }
  const events = await eventsOf(server);
  return events.filter((e) => e.type === 'toxic_applied').map((e) => e.connection ?? -1);
}

async function hitsWithSeed(seed: number, n: number, upstream: string): Promise<number[]> {
  await using server = await startToxiproxyServer({ port: 0, seed });
  const hits = await hitsOn(server, n, upstream); // before the server is disposed
  return hits;
}

test('a seed gives the same toxicity draws on every run; toxicity 0 never acts', { skip }, async () => {
  await using echo = await startTestServer();
  const first = await hitsWithSeed(42, 16, echo.address);
  const again = await hitsWithSeed(42, 16, echo.address);
  assert.deepEqual(again, first);
  // A real draw: some connections hit, some missed (all-or-nothing has probability 2^-15).
  assert.ok(first.length > 0 && first.length < 16, `hits ${JSON.stringify(first)}`);

  await using server = await startToxiproxyServer({ port: 0, seed: 7 });
  const r = await call(server, 'POST', '/proxies', {
    name: 'z',
    listen: '127.0.0.1:0',
    upstream: echo.address,
  });
  const port = portOf(r.json as { listen: string });
  for (const stream of ['upstream', 'downstream'])
    await call(server, 'POST', '/proxies/z/toxics', { type: 'reset_peer', stream, toxicity: 0 });
  for (let i = 0; i < 20; i++) {
    const s = await connect(port);
    assert.equal((await echoRoundTrip(s, Buffer.from('safe'), 3000)).toString(), 'safe');
    s.destroy();
  }
  assert.equal((await eventsOf(server)).filter((e) => e.type === 'toxic_applied').length, 0);
});

test('`limbo proxy --seed N` draws what the embedded server with seed N draws', { skip }, async () => {
  await using echo = await startTestServer();
  const cmd = limboCommand();
  const proc = await startProcess({
    name: 'proxy-seeded',
    command: cmd.command,
    args: [...cmd.args, 'proxy', '--port', '0', '--seed', '42'],
  });
  try {
    const api = proc.ready.addresses.api;
    assert.ok(api !== undefined);
    assert.deepEqual(await hitsOn({ url: api }, 12, echo.address), await hitsWithSeed(42, 12, echo.address));
  } finally {
    await proc.stop();
  }
});

test(
  'POST /populate with toxics: the proxy listens with them in place; a bad toxic creates nothing',
  { skip },
  async () => {
    await using echo = await startTestServer();
    await using server = await startToxiproxyServer({ port: 0 });
    const lat = { name: 'lat', type: 'latency', attributes: { latency: 300 } };
    let r = await call(server, 'POST', '/populate', [
      { name: 'ok', listen: '127.0.0.1:0', upstream: echo.address },
      { name: 'bad', listen: '127.0.0.1:0', upstream: echo.address, toxics: [lat, { type: 'nope' }] },
    ]);
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, { error: 'invalid toxic type at proxy 2 toxic 2', status: 400, proxies: null });
    assert.equal((await call(server, 'GET', '/proxies/ok')).status, 404);

    r = await call(server, 'POST', '/populate', [
      { name: 'slow', listen: '127.0.0.1:0', upstream: echo.address, toxics: [lat] },
    ]);
    assert.equal(r.status, 201, r.text);
    const [proxy] = (r.json as { proxies: { listen: string; toxics: { name: string }[] }[] }).proxies;
    assert.deepEqual(
      proxy?.toxics.map((t) => t.name),
      ['lat'],
    );
    // The very first connection already meets the toxic.
    const s = await connect(portOf(proxy));
    try {
      let start = performance.now();
      await echoRoundTrip(s, Buffer.from('a'));
      assert.ok(performance.now() - start >= 280, `first round trip ${performance.now() - start} ms`);
      // The same entry again: left alone, the live connection kept.
      r = await call(server, 'POST', '/populate', [
        { name: 'slow', listen: (proxy as { listen: string }).listen, upstream: echo.address, toxics: [lat] },
      ]);
      assert.equal(r.status, 201);
      start = performance.now();
      await echoRoundTrip(s, Buffer.from('b'));
      assert.ok(performance.now() - start >= 280);
    } finally {
      s.destroy();
    }
  },
);

test(
  'GET /events lists connections opened and closed and toxics applied, after a seq',
  { skip },
  async () => {
    await using echo = await startTestServer();
    await using server = await startToxiproxyServer({ port: 0 });
    const r = await call(server, 'POST', '/proxies', {
      name: 'ev',
      listen: '127.0.0.1:0',
      upstream: echo.address,
    });
    const port = portOf(r.json as { listen: string });
    await call(server, 'POST', '/proxies/ev/toxics', { name: 'l', type: 'latency', stream: 'upstream' });
    const mark = (await eventsOf(server)).at(-1)?.seq ?? 0;
    const s = await connect(port);
    await echoRoundTrip(s, Buffer.from('hello'));
    s.destroy();
    let events: ProxyEvent[] = [];
    for (let i = 0; i < 50 && !events.some((e) => e.type === 'connection_closed'); i++) {
      await sleepMs(20);
      events = await eventsOf(server, mark);
    }
    assert.deepEqual(
      events.map((e) => [e.type, e.proxy, e.connection, e.toxic]),
      [
        ['connection_opened', 'ev', 1, undefined],
        ['toxic_applied', 'ev', 1, 'l'],
        ['connection_closed', 'ev', 1, undefined],
      ],
    );
    assert.ok(events.every((e) => e.seq > mark));
    const metrics = await (await fetch(server.metricsUrl)).text();
    assert.match(metrics, /limbo_proxy_connections_total\{proxy="ev",event="opened"\} 1/);
    assert.match(metrics, /limbo_proxy_connections_total\{proxy="ev",event="closed"\} 1/);
    assert.match(
      metrics,
      /limbo_proxy_toxics_applied_total\{proxy="ev",toxic="l",type="latency",stream="upstream"\} 1/,
    );
  },
);

test(
  'packet_loss: upstream attributes (floats, defaults); loss_rate 1 drops every chunk, 0 none',
  { skip },
  async () => {
    await using echo = await startTestServer();
    await using server = await startToxiproxyServer({ port: 0, seed: 1 });
    const r = await call(server, 'POST', '/proxies', {
      name: 'pl',
      listen: '127.0.0.1:0',
      upstream: echo.address,
    });
    const port = portOf(r.json as { listen: string });
    const added = await call(server, 'POST', '/proxies/pl/toxics', { name: 'loss', type: 'packet_loss' });
    assert.equal(added.status, 200, added.text);
    assert.deepEqual((added.json as { attributes: unknown }).attributes, { loss_rate: 0.1, correlation: 0 });
    const bad = await call(server, 'POST', '/proxies/pl/toxics/loss', { attributes: { loss_rate: 'x' } });
    assert.equal(bad.status, 400);

    await call(server, 'POST', '/proxies/pl/toxics/loss', { attributes: { loss_rate: 1 } });
    let s = await connect(port);
    s.write('lost');
    await sleepMs(200);
    s.end();
    const closing = await readUntilClose(s, 3000);
    assert.equal(closing.data.length, 0);

    await call(server, 'POST', '/proxies/pl/toxics/loss', { attributes: { loss_rate: 0 } });
    s = await connect(port);
    assert.equal((await echoRoundTrip(s, Buffer.from('kept'))).toString(), 'kept');
    s.destroy();

    // Half the chunks (one write each, spaced so they stay separate chunks) arrive, whole.
    await call(server, 'POST', '/proxies/pl/toxics/loss', { attributes: { loss_rate: 0.5, correlation: 0 } });
    s = await connect(port);
    const got: Buffer[] = [];
    s.on('data', (d: Buffer) => got.push(d));
    for (let i = 0; i < 60; i++) {
      s.write(Buffer.alloc(10, i));
      await sleepMs(5);
    }
    await sleepMs(200);
    s.destroy();
    const all = Buffer.concat(got);
    assert.equal(all.length % 10, 0);
    assert.ok(all.length >= 100 && all.length <= 500, `${all.length / 10} of 60 chunks arrived`);
  },
);

test('the control API answers within 1 s while the data plane is saturated', { skip }, async (t) => {
  // A firehose upstream and clients that write as fast as they can; one client never reads,
  // so its downstream link sits full behind a latency toxic (the case of Toxiproxy #558).
  const chunk = Buffer.alloc(64 * 1024, 7);
  await using firehose = await startTestServer((sock) => {
    const pump = (): void => {
      while (!sock.destroyed && sock.write(chunk));
    };
    sock.on('drain', pump);
    sock.on('data', () => {});
    pump();
  });
  await using server = await startToxiproxyServer({ port: 0 });
  const r = await call(server, 'POST', '/proxies', {
    name: 'hot',
    listen: '127.0.0.1:0',
    upstream: firehose.address,
  });
  const port = portOf(r.json as { listen: string });
  await call(server, 'POST', '/proxies/hot/toxics', {
    name: 'lat',
    type: 'latency',
    attributes: { latency: 50 },
  });
  const clients = await Promise.all(Array.from({ length: 12 }, () => connect(port)));
  const stuck = clients[0]!;
  stuck.pause();
  let running = true;
  for (const c of clients.slice(1)) {
    c.on('data', () => {});
    const write = (): void => {
      while (running && !c.destroyed && c.write(chunk));
    };
    c.on('drain', write);
    write();
  }
  try {
    await sleepMs(300); // let every queue fill
    const worstMs: Record<string, number> = {};
    const timed = async (
      what: string,
      op: () => Promise<{ status: number }>,
      status: number,
    ): Promise<void> => {
      const start = performance.now();
      const res = await withTimeout(op(), 5000, what);
      const ms = performance.now() - start;
      assert.equal(res.status, status, what);
      worstMs[what] = Math.max(worstMs[what] ?? 0, ms);
    };
    for (let i = 0; i < 5; i++) {
      await timed('GET /proxies', () => call(server, 'GET', '/proxies'), 200);
      await timed(
        'add toxic',
        () =>
          call(server, 'POST', '/proxies/hot/toxics', {
            name: 'bw',
            type: 'bandwidth',
            attributes: { rate: 100 },
          }),
        200,
      );
      await timed(
        'update toxic',
        () => call(server, 'POST', '/proxies/hot/toxics/lat', { attributes: { latency: 60 + i } }),
        200,
      );
      await timed('remove toxic', () => call(server, 'DELETE', '/proxies/hot/toxics/bw'), 204);
    }
    t.diagnostic(`slowest API calls under load (ms): ${JSON.stringify(worstMs)}`);
    const worst = Math.max(...Object.values(worstMs));
    assert.ok(worst < 1000, `slowest API calls under load (ms): ${JSON.stringify(worstMs)}`);
  } finally {
    running = false;
    for (const c of clients) c.destroy();
  }
});
