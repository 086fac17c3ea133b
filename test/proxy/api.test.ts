// HTTP API: status codes and error strings of Toxiproxy 2.12.0, defaults, populate rules,
// toxic names, toxicity round-trip and attribute merge. Raw fetch where the node client
// would hide the status or the body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { uniqueName, useTargetAndEcho } from './helpers.js';

const fx = useTargetAndEcho();

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown; text: string }> {
  const res = await fetch(`${fx.target.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

function errorOf(r: { json: unknown }): string {
  return (r.json as { error?: string } | undefined)?.error ?? '';
}

async function newProxy(extra: Record<string, unknown> = {}): Promise<{ name: string; listen: string }> {
  const name = uniqueName('api');
  const r = await call('POST', '/proxies', {
    name,
    listen: '127.0.0.1:0',
    upstream: fx.echo.address,
    ...extra,
  });
  assert.equal(r.status, 201, r.text);
  return r.json as { name: string; listen: string };
}

test('GET /version answers 200 with a version', async () => {
  const r = await call('GET', '/version');
  assert.equal(r.status, 200);
  assert.ok(typeof (r.json as { version?: unknown }).version === 'string');
  assert.ok((await fx.target.client.getVersion()).length > 0);
});

test('POST /proxies: 201 with the bound listen address and the defaults', async () => {
  const name = uniqueName('create');
  const r = await call('POST', '/proxies', { name, listen: 'localhost:0', upstream: fx.echo.address });
  assert.equal(r.status, 201);
  const p = r.json as { name: string; listen: string; upstream: string; enabled: boolean; toxics: unknown[] };
  assert.equal(p.name, name);
  assert.match(p.listen, /^127\.0\.0\.1:\d+$/);
  assert.notEqual(p.listen, '127.0.0.1:0');
  assert.equal(p.upstream, fx.echo.address);
  assert.equal(p.enabled, true);
  assert.deepEqual(p.toxics, []);
  const all = (await call('GET', '/proxies')).json as Record<string, { listen: string }>;
  assert.equal(all[name]?.listen, p.listen);
  assert.equal((await call('DELETE', `/proxies/${name}`)).status, 204);
  assert.equal(errorOf(await call('DELETE', `/proxies/${name}`)), 'proxy not found');
});

test('a proxy created disabled keeps the listen string it was given', async () => {
  const p = await newProxy({ enabled: false });
  assert.equal(p.listen, '127.0.0.1:0');
  await call('DELETE', `/proxies/${p.name}`);
});

test('POST /proxies errors: missing fields, bad body, wrong types, duplicates', async () => {
  let r = await call('POST', '/proxies', { listen: '127.0.0.1:0', upstream: fx.echo.address });
  assert.equal(r.status, 400);
  assert.deepEqual(r.json, { error: 'missing required field: name', status: 400 });
  r = await call('POST', '/proxies', { name: uniqueName('x'), listen: '127.0.0.1:0' });
  assert.equal(r.status, 400);
  assert.equal(errorOf(r), 'missing required field: upstream');
  r = await call('POST', '/proxies', '{not json');
  assert.equal(r.status, 400);
  assert.match(errorOf(r), /^bad request body: /);
  r = await call('POST', '/proxies', { name: 5, upstream: fx.echo.address });
  assert.equal(r.status, 400);
  assert.match(errorOf(r), /^bad request body: /);
  assert.equal((r.json as { status: number }).status, 400);
  const p = await newProxy();
  r = await call('POST', '/proxies', { name: p.name, listen: '127.0.0.1:0', upstream: fx.echo.address });
  assert.equal(r.status, 409);
  assert.equal(errorOf(r), 'proxy already exists');
  await call('DELETE', `/proxies/${p.name}`);
});

test('listen errors give 500', async () => {
  const p = await newProxy();
  const r = await call('POST', '/proxies', {
    name: uniqueName('clash'),
    listen: p.listen,
    upstream: fx.echo.address,
  });
  assert.equal(r.status, 500);
  assert.ok(errorOf(r).length > 0);
  await call('DELETE', `/proxies/${p.name}`);
});

test('unknown proxy 404, unknown path 404, wrong method 405, browsers 403', async () => {
  const missing = uniqueName('missing');
  for (const [method, path] of [
    ['GET', `/proxies/${missing}`],
    ['POST', `/proxies/${missing}`],
    ['DELETE', `/proxies/${missing}`],
    ['GET', `/proxies/${missing}/toxics`],
    ['POST', `/proxies/${missing}/toxics`],
  ] as const) {
    const r = await call(method, path, method === 'POST' ? { type: 'latency' } : undefined);
    assert.equal(r.status, 404, `${method} ${path}`);
    assert.equal(errorOf(r), 'proxy not found');
  }
  assert.equal((await call('GET', '/no/such/path')).status, 404);
  assert.equal((await call('PUT', '/proxies')).status, 405);
  assert.equal((await call('DELETE', '/version')).status, 405);
  const browser = await call('GET', '/proxies', undefined, {
    'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)',
  });
  assert.equal(browser.status, 403);
});

test('updating a proxy with POST or PATCH: omitted fields keep their values', async () => {
  const p = await newProxy();
  let r = await call('POST', `/proxies/${p.name}`, { enabled: false });
  assert.equal(r.status, 200);
  assert.deepEqual(
    { ...(r.json as object), toxics: undefined },
    { name: p.name, listen: p.listen, upstream: fx.echo.address, enabled: false, toxics: undefined },
  );
  r = await call('PATCH', `/proxies/${p.name}`, { enabled: true });
  assert.equal(r.status, 200);
  assert.equal((r.json as { enabled: boolean }).enabled, true);
  assert.equal((r.json as { listen: string }).listen, p.listen);
  r = await call('PATCH', `/proxies/${p.name}`, '{"enabled": "yes"}');
  assert.equal(r.status, 400);
  assert.match(errorOf(r), /^bad request body: /);
  await call('DELETE', `/proxies/${p.name}`);
});

test('toxics: 200 on create, defaults, zero-filled attributes, case-insensitive stream', async () => {
  const p = await newProxy();
  const base = `/proxies/${p.name}/toxics`;
  let r = await call('POST', base, { type: 'latency', attributes: { latency: 10 } });
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, {
    name: 'latency_downstream',
    type: 'latency',
    stream: 'downstream',
    toxicity: 1,
    attributes: { latency: 10, jitter: 0 },
  });
  r = await call('POST', base, { type: 'bandwidth', stream: 'UpStream', toxicity: 0, attributes: {} });
  assert.equal(r.status, 200);
  const bw = r.json as { name: string; stream: string; toxicity: number; attributes: object };
  assert.equal(bw.name, 'bandwidth_upstream');
  assert.equal(bw.stream, 'upstream');
  assert.equal(bw.toxicity, 0, 'an explicit toxicity 0 is kept');
  assert.deepEqual(bw.attributes, { rate: 0 });
  r = await call('POST', base, { name: 'sl', type: 'slicer', toxicity: 0.25 });
  assert.deepEqual((r.json as { attributes: object }).attributes, {
    average_size: 0,
    size_variation: 0,
    delay: 0,
  });
  assert.equal((r.json as { toxicity: number }).toxicity, 0.25);
  // Order: upstream toxics first, then downstream, each in creation order.
  const list = (await call('GET', base)).json as { name: string }[];
  assert.deepEqual(
    list.map((t) => t.name),
    ['bandwidth_upstream', 'latency_downstream', 'sl'],
  );
  const proxy = (await call('GET', `/proxies/${p.name}`)).json as { toxics: { name: string }[] };
  assert.deepEqual(
    proxy.toxics.map((t) => t.name),
    ['bandwidth_upstream', 'latency_downstream', 'sl'],
  );
  for (const type of [
    'latency',
    'bandwidth',
    'slow_close',
    'timeout',
    'reset_peer',
    'slicer',
    'limit_data',
  ]) {
    const t = await call('POST', base, { name: `all_${type}`, type, stream: 'upstream' });
    assert.equal(t.status, 200, `${type}: ${t.text}`);
  }
  await call('DELETE', `/proxies/${p.name}`);
});

test('toxic errors: bad stream, bad type, duplicate names across streams, not found, bad body', async () => {
  const p = await newProxy();
  const base = `/proxies/${p.name}/toxics`;
  let r = await call('POST', base, { type: 'latency', stream: 'sideways' });
  assert.equal(r.status, 400);
  assert.equal(errorOf(r), 'stream was invalid, can be either upstream or downstream');
  r = await call('POST', base, { type: 'no_such_toxic' });
  assert.equal(r.status, 400);
  assert.equal(errorOf(r), 'invalid toxic type');
  assert.equal((await call('POST', base, { name: 'dup', type: 'latency', stream: 'upstream' })).status, 200);
  r = await call('POST', base, { name: 'dup', type: 'latency', stream: 'downstream' });
  assert.equal(r.status, 409);
  assert.equal(errorOf(r), 'toxic already exists');
  r = await call('POST', base, '{"type": "latency", "attributes": {"latency": "slow"}}');
  assert.equal(r.status, 400);
  assert.match(errorOf(r), /^bad request body: /);
  r = await call('POST', base, '[');
  assert.equal(r.status, 400);
  for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) {
    r = await call(
      method,
      `${base}/nope`,
      method === 'GET' || method === 'DELETE' ? undefined : { toxicity: 1 },
    );
    assert.equal(r.status, 404, method);
    assert.equal(errorOf(r), 'toxic not found');
  }
  await call('DELETE', `/proxies/${p.name}`);
});

test('updating a toxic merges attributes and round-trips toxicity; DELETE 204', async () => {
  const p = await newProxy();
  const base = `/proxies/${p.name}/toxics`;
  await call('POST', base, {
    name: 'lat',
    type: 'latency',
    stream: 'upstream',
    toxicity: 0.5,
    attributes: { latency: 100, jitter: 5 },
  });
  let r = await call('POST', `${base}/lat`, { attributes: { jitter: 7 } });
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, {
    name: 'lat',
    type: 'latency',
    stream: 'upstream',
    toxicity: 0.5,
    attributes: { latency: 100, jitter: 7 },
  });
  r = await call('PATCH', `${base}/lat`, { toxicity: 0 });
  assert.equal((r.json as { toxicity: number }).toxicity, 0);
  assert.deepEqual((r.json as { attributes: object }).attributes, { latency: 100, jitter: 7 });
  r = await call('GET', `${base}/lat`);
  assert.equal((r.json as { toxicity: number }).toxicity, 0);
  // Through the node client as well.
  const proxy = await fx.target.client.get(p.name);
  const toxic = await proxy.getToxic('lat');
  const updated = await toxic.update({
    ...toxic.toJson(),
    toxicity: 1,
    attributes: { latency: 50, jitter: 0 },
  });
  assert.equal(updated.toxicity, 1);
  assert.deepEqual(updated.attributes, { latency: 50, jitter: 0 });
  assert.equal((await call('DELETE', `${base}/lat`)).status, 204);
  assert.equal((await call('GET', `${base}/lat`)).status, 404);
  await call('DELETE', `/proxies/${p.name}`);
});

test('populate: empty list, validation first, equal entries kept, different ones replaced', async () => {
  let r = await call('POST', '/populate', []);
  assert.equal(r.status, 201);
  assert.deepEqual(r.json, { proxies: [] });
  assert.deepEqual(await fx.target.client.populate([]), {});

  const a = uniqueName('pop_a');
  const b = uniqueName('pop_b');
  // A bad entry: nothing is created.
  r = await call('POST', '/populate', [
    { name: a, listen: '127.0.0.1:0', upstream: fx.echo.address },
    { listen: '127.0.0.1:0', upstream: fx.echo.address },
  ]);
  assert.equal(r.status, 400);
  assert.equal(errorOf(r), 'missing required field: name at proxy 2');
  assert.equal((await call('GET', `/proxies/${a}`)).status, 404);

  const created = await fx.target.client.populate([
    { name: a, listen: '127.0.0.1:0', upstream: fx.echo.address },
    { name: b, listen: '127.0.0.1:0', upstream: fx.echo.address, enabled: false },
  ]);
  assert.equal(created[a]?.enabled, true);
  assert.equal(created[b]?.enabled, false);
  const aListen = created[a].listen;
  await call('POST', `/proxies/${a}/toxics`, { name: 'keep', type: 'latency' });
  // Equal entry (same listen and upstream): left alone with its toxics.
  r = await call('POST', '/populate', [{ name: a, listen: aListen, upstream: fx.echo.address }]);
  assert.equal(r.status, 201);
  let toxics = (await call('GET', `/proxies/${a}/toxics`)).json as unknown[];
  assert.equal(toxics.length, 1);
  // Different entry: replaced (toxics gone).
  r = await call('POST', '/populate', [
    { name: a, listen: '127.0.0.1:0', upstream: `127.0.0.1:${fx.echo.port}` },
  ]);
  assert.equal(r.status, 201);
  toxics = (await call('GET', `/proxies/${a}/toxics`)).json as unknown[];
  assert.equal(toxics.length, 0);
  // A listen error part-way: the error shape carries the proxies created so far.
  const c = uniqueName('pop_c');
  const live = (await call('GET', `/proxies/${a}`)).json as { listen: string };
  r = await call('POST', '/populate', [
    { name: c, listen: '127.0.0.1:0', upstream: fx.echo.address },
    { name: uniqueName('pop_d'), listen: live.listen, upstream: fx.echo.address },
  ]);
  assert.equal(r.status, 500);
  const body = r.json as { error: string; status: number; proxies: { name: string }[] };
  assert.equal(body.status, 500);
  assert.ok(body.error.length > 0);
  assert.deepEqual(
    body.proxies.map((x) => x.name),
    [c],
  );
  for (const n of [a, b, c]) await call('DELETE', `/proxies/${n}`);
});
