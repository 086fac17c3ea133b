// Points where the embedded server once differed from Toxiproxy 2.12.0, each
// checked as 2.12 behaves, so the file passes against a real server too
// (LIMBO_TOXIPROXY_URL): the `noop` toxic, listen hostnames resolved before comparing, a
// proxy without `listen` on every interface, Go's http.Error format, mux's 404 and 405,
// /version's hand-written body (toxiproxy-ruby returns it to callers as it is), and
// GET /proxies keyed in Go's map order (sorted bytes), the order clients iterate in.
// (The bind check is the one piece of limbo's own code here; it passes whatever the server.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, echoRoundTrip, portOf, uniqueName, useTargetAndEcho } from './helpers.js';
import { listenOptions } from '../../src/proxy/proxy.js';

const fx = useTargetAndEcho();

interface Raw {
  status: number;
  contentType: string | null;
  text: string;
}

async function call(method: string, path: string, body?: unknown): Promise<Raw> {
  const res = await fetch(`${fx.target.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

interface ProxyBody {
  name: string;
  listen: string;
  toxics: { name: string }[];
}

async function newProxy(): Promise<ProxyBody> {
  const r = await call('POST', '/proxies', {
    name: uniqueName('fid'),
    listen: '127.0.0.1:0',
    upstream: fx.echo.address,
  });
  assert.equal(r.status, 201, r.text);
  return JSON.parse(r.text) as ProxyBody;
}

test('the noop toxic is a registered type: 200, no attributes, data untouched', async () => {
  const p = await newProxy();
  try {
    const r = await call('POST', `/proxies/${p.name}/toxics`, { type: 'noop', attributes: {} });
    assert.equal(r.status, 200, r.text);
    const toxic = JSON.parse(r.text) as Record<string, unknown>;
    assert.deepEqual(toxic, {
      attributes: {},
      name: 'noop_downstream',
      type: 'noop',
      stream: 'downstream',
      toxicity: 1,
    });
    const s = await connect(portOf(p));
    try {
      const payload = Buffer.from('through noop');
      assert.deepEqual(await echoRoundTrip(s, payload), payload);
    } finally {
      s.destroy();
    }
  } finally {
    await call('DELETE', `/proxies/${p.name}`);
  }
});

test('populate and update with a hostname for the bound address keep the proxy, its toxics and its connections', async () => {
  const p = await newProxy();
  try {
    const port = portOf(p);
    const added = await call('POST', `/proxies/${p.name}/toxics`, {
      name: 'lat',
      type: 'latency',
      attributes: { latency: 1 },
    });
    assert.equal(added.status, 200, added.text);
    const s = await connect(port);
    try {
      assert.equal((await echoRoundTrip(s, Buffer.from('before'))).toString(), 'before');
      const populated = await call('POST', '/populate', [
        { name: p.name, listen: `localhost:${port}`, upstream: fx.echo.address },
      ]);
      assert.equal(populated.status, 201, populated.text);
      const [again] = (JSON.parse(populated.text) as { proxies: ProxyBody[] }).proxies;
      assert.equal(again?.listen, p.listen);
      assert.deepEqual(
        again?.toxics.map((t) => t.name),
        ['lat'],
      );
      const updated = await call('POST', `/proxies/${p.name}`, { listen: `localhost:${port}` });
      assert.equal(updated.status, 200, updated.text);
      const u = JSON.parse(updated.text) as ProxyBody;
      assert.equal(u.listen, p.listen);
      assert.deepEqual(
        u.toxics.map((t) => t.name),
        ['lat'],
      );
      // The connection opened before both calls is still proxied.
      assert.equal((await echoRoundTrip(s, Buffer.from('after'), 3000)).toString(), 'after');
    } finally {
      s.destroy();
    }
  } finally {
    await call('DELETE', `/proxies/${p.name}`);
  }
});

test('without listen (or with an empty host) a proxy binds every interface; localhost is loopback', () => {
  // What the listener is given, checked without opening one: the tests stay on 127.0.0.1.
  assert.deepEqual(listenOptions(''), { port: 0 });
  assert.deepEqual(listenOptions(':8474'), { port: 8474 });
  assert.deepEqual(listenOptions('localhost:0'), { host: '127.0.0.1', port: 0 });
  assert.deepEqual(listenOptions('127.0.0.1:5000'), { host: '127.0.0.1', port: 5000 });
  assert.deepEqual(listenOptions('[::1]:5000'), { host: '::1', port: 5000 });
});

// Binds every interface for a moment, so only on request (LIMBO_TEST_ALL_INTERFACES=1), e.g.
// against a real server to compare; it connects on 127.0.0.1 only.
const allInterfaces = process.env.LIMBO_TEST_ALL_INTERFACES === '1';
test(
  'a proxy created without listen binds every interface on a free port',
  {
    skip: allInterfaces ? false : 'binds every interface: set LIMBO_TEST_ALL_INTERFACES=1',
  },
  async () => {
    const name = uniqueName('nolisten');
    const r = await call('POST', '/proxies', { name, upstream: fx.echo.address });
    assert.equal(r.status, 201, r.text);
    try {
      const p = JSON.parse(r.text) as ProxyBody;
      assert.match(p.listen, /^(\[::\]|0\.0\.0\.0):\d+$/);
      assert.notEqual(portOf(p), 0);
      // Reached on loopback, like every test here.
      const s = await connect(portOf(p));
      try {
        assert.equal((await echoRoundTrip(s, Buffer.from('any'))).toString(), 'any');
      } finally {
        s.destroy();
      }
    } finally {
      await call('DELETE', `/proxies/${name}`);
    }
  },
);

test("API errors are Go's http.Error: text/plain, the JSON object and a newline", async () => {
  const missing = uniqueName('missing');
  const r = await call('GET', `/proxies/${missing}`);
  assert.equal(r.status, 404);
  assert.equal(r.contentType, 'text/plain; charset=utf-8');
  assert.equal(r.text, '{"error":"proxy not found","status":404}\n');
  const bad = await call('POST', '/proxies', { listen: '127.0.0.1:0', upstream: fx.echo.address });
  assert.equal(bad.status, 400);
  assert.equal(bad.contentType, 'text/plain; charset=utf-8');
  assert.equal(bad.text, '{"error":"missing required field: name","status":400}\n');
});

test('an unknown path is "404 page not found"; a wrong method an empty 405', async () => {
  const notFound = await call('GET', '/no/such/path');
  assert.equal(notFound.status, 404);
  assert.equal(notFound.contentType, 'text/plain; charset=utf-8');
  assert.equal(notFound.text, '404 page not found\n');
  assert.equal((await call('GET', '/proxies/')).text, '404 page not found\n');
  for (const [method, path] of [
    ['PUT', '/proxies'],
    ['DELETE', '/version'],
    ['GET', '/reset'],
  ] as const) {
    const r = await call(method, path);
    assert.equal(r.status, 405, `${method} ${path}`);
    assert.equal(r.text, '', `${method} ${path}`);
  }
});

test('GET /version is the body 2.12 writes by hand: {"version": "…"} and a newline, charset in the type', async () => {
  const r = await call('GET', '/version');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.contentType, 'application/json;charset=utf-8');
  assert.match(r.text, /^\{"version": "[^"]+"\}\n$/);
  assert.equal(typeof (JSON.parse(r.text) as { version: unknown }).version, 'string');
});

test('GET /proxies lists its keys as Go marshals a map: sorted by bytes, "10" before "9"', async () => {
  const base = uniqueName('ord');
  // Created out of order; the integer-like names are the ones a JS object would put first.
  const names = [`${base}-zeta`, '9', `${base}-Alpha`, '10', `${base}-alpha`, `${base}-é`];
  const created: string[] = [];
  try {
    for (const name of names) {
      const r = await call('POST', '/proxies', { name, listen: '127.0.0.1:0', upstream: fx.echo.address });
      assert.equal(r.status, 201, r.text);
      created.push(name);
    }
    const r = await call('GET', '/proxies');
    assert.equal(r.status, 200, r.text);
    // The keys in the order of the raw text (JSON.parse would put integer-like ones first):
    // each top-level value is a proxy object, and its JSON starts with its name.
    const inText = [...r.text.matchAll(/"((?:[^"\\]|\\.)*)":\{"name":/g)].map(
      (m) => JSON.parse(`"${m[1]}"`) as string,
    );
    for (const name of names) assert.ok(inText.includes(name), `${name} missing from ${r.text}`);
    const goOrder = inText.slice().sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    assert.deepEqual(inText, goOrder);
    assert.ok(inText.indexOf('10') < inText.indexOf('9'), inText.join(' '));
  } finally {
    for (const name of created) await call('DELETE', `/proxies/${encodeURIComponent(name)}`);
  }
});
