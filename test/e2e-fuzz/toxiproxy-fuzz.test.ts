// The embedded Toxiproxy's HTTP API under bad input: bad JSON, unknown fields, negative,
// zero, huge and non-numeric toxic attributes, bad streams and toxicities, oversized
// bodies. Every request is answered within a bound, the server stays up, and once the
// toxic is gone the proxy carries data again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startToxiproxyServer, type StartedToxiproxyServer } from '../../src/proxy/server.js';
import { rawExchange } from './raw-http.js';

const ANSWER_MS = 5000;

let server: StartedToxiproxyServer;
let echo: net.Server;
let proxyPort: number;
before(async () => {
  echo = net.createServer((s) => {
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  server = await startToxiproxyServer({ port: 0 });
  const res = await api('POST', '/proxies', {
    name: 'fuzz',
    listen: '127.0.0.1:0',
    upstream: `127.0.0.1:${(echo.address() as AddressInfo).port}`,
  });
  assert.equal(res.status, 201);
  proxyPort = Number(
    String((res.body as { listen: string }).listen)
      .split(':')
      .pop(),
  );
});
after(async () => {
  await server?.stop();
  await new Promise<void>((r) => (echo ? echo.close(() => r()) : r()));
});

async function api(
  method: string,
  path: string,
  body?: unknown,
  raw?: string,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(server.url + path, {
    method,
    ...(raw !== undefined || body !== undefined
      ? { body: raw ?? JSON.stringify(body), headers: { 'content-type': 'application/json' } }
      : {}),
    signal: AbortSignal.timeout(ANSWER_MS),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed };
}

/** Sends a few bytes through the proxy: 'echo' if they come back within `ms`, else 'close' or 'silent'. */
function probe(ms = 2000): Promise<'echo' | 'close' | 'silent'> {
  return new Promise((resolve) => {
    const s = net.connect(proxyPort, '127.0.0.1', () => s.write('ping'));
    let got = '';
    const t = setTimeout(() => {
      s.destroy();
      resolve('silent');
    }, ms);
    s.on('data', (d: Buffer) => {
      got += d.toString();
      if (got === 'ping') {
        clearTimeout(t);
        s.destroy();
        resolve('echo');
      }
    });
    s.on('close', () => {
      clearTimeout(t);
      resolve(got === 'ping' ? 'echo' : 'close');
    });
    s.on('error', () => undefined);
  });
}

interface ToxicCase {
  name: string;
  body?: unknown;
  raw?: string;
  /** Statuses Toxiproxy 2.12 may answer (200 = created). */
  expect: number[];
}

const toxicCases: ToxicCase[] = [
  { name: 'bad JSON', raw: '{"type": "latency",', expect: [400] },
  { name: 'not an object', raw: '[1,2,3]', expect: [400] },
  { name: 'JSON null', raw: 'null', expect: [400] },
  { name: 'empty body', raw: '', expect: [400] },
  { name: 'unknown type', body: { type: 'earthquake', attributes: {} }, expect: [400] },
  { name: 'no type', body: { attributes: { latency: 1 } }, expect: [400] },
  { name: 'type not a string', body: { type: 5 }, expect: [400] },
  {
    name: 'bad stream',
    body: { type: 'latency', stream: 'sideways', attributes: { latency: 1 } },
    expect: [400],
  },
  {
    name: 'unknown top-level field',
    body: { type: 'latency', name: 'u1', bogus: true, attributes: { latency: 1 } },
    expect: [200, 400],
  },
  {
    name: 'unknown attribute',
    body: { type: 'latency', name: 'u2', attributes: { latency: 1, wobble: 3 } },
    expect: [200, 400],
  },
  {
    name: 'attributes not an object',
    body: { type: 'latency', name: 'u3', attributes: 'fast' },
    expect: [400],
  },
  {
    name: 'attribute a string',
    body: { type: 'latency', name: 'u4', attributes: { latency: 'slow' } },
    expect: [400],
  },
  {
    name: 'attribute a float',
    body: { type: 'latency', name: 'u5', attributes: { latency: 1.5 } },
    expect: [200, 400],
  },
  {
    name: 'attribute null',
    body: { type: 'latency', name: 'u6', attributes: { latency: null } },
    expect: [200, 400],
  },
  {
    name: 'negative latency',
    body: { type: 'latency', name: 'n1', attributes: { latency: -100, jitter: -5 } },
    expect: [200, 400],
  },
  {
    name: 'huge latency',
    body: { type: 'latency', name: 'n2', attributes: { latency: 1e18 } },
    expect: [200, 400],
  },
  {
    name: 'negative bandwidth',
    body: { type: 'bandwidth', name: 'n3', attributes: { rate: -1 } },
    expect: [200, 400],
  },
  {
    name: 'zero bandwidth',
    body: { type: 'bandwidth', name: 'n4', attributes: { rate: 0 } },
    expect: [200, 400],
  },
  {
    name: 'negative limit_data',
    body: { type: 'limit_data', name: 'n5', attributes: { bytes: -1 } },
    expect: [200, 400],
  },
  {
    name: 'negative timeout',
    body: { type: 'timeout', name: 'n6', attributes: { timeout: -1 } },
    expect: [200, 400],
  },
  {
    name: 'negative reset_peer',
    body: { type: 'reset_peer', name: 'n7', attributes: { timeout: -10 } },
    expect: [200, 400],
  },
  {
    name: 'negative slow_close',
    body: { type: 'slow_close', name: 'n8', attributes: { delay: -10 } },
    expect: [200, 400],
  },
  {
    name: 'negative slicer',
    body: { type: 'slicer', name: 'n9', attributes: { average_size: -1, size_variation: -5, delay: -1 } },
    expect: [200, 400],
  },
  {
    name: 'zero slicer',
    body: { type: 'slicer', name: 'n10', attributes: { average_size: 0, size_variation: 0, delay: 0 } },
    expect: [200, 400],
  },
  {
    name: 'negative toxicity',
    body: { type: 'latency', name: 't1', toxicity: -1, attributes: { latency: 1 } },
    expect: [200, 400],
  },
  {
    name: 'toxicity above 1',
    body: { type: 'latency', name: 't2', toxicity: 7, attributes: { latency: 1 } },
    expect: [200, 400],
  },
  {
    name: 'toxicity a string',
    body: { type: 'latency', name: 't3', toxicity: 'all', attributes: { latency: 1 } },
    expect: [400],
  },
  {
    name: 'a very long name',
    body: { type: 'latency', name: 'x'.repeat(10_000), attributes: { latency: 1 } },
    expect: [200, 400],
  },
];

test('every bad toxic request is answered; with whatever was accepted the proxy stays bounded, and carries data once it is gone', async () => {
  const wrong: string[] = [];
  for (const c of toxicCases) {
    const res = await api('POST', '/proxies/fuzz/toxics', c.body, c.raw).catch((e: unknown) => ({
      status: -1,
      body: String(e),
    }));
    if (!c.expect.includes(res.status)) {
      wrong.push(
        `${c.name}: expected ${c.expect.join('|')}, got ${res.status} ${JSON.stringify(res.body).slice(0, 100)}`,
      );
    }
    if (res.status === 200) {
      // Any outcome is allowed with the toxic in place (a timeout of 0 holds data by
      // design), but the probe itself must not break the server.
      await probe(500);
      const name = (res.body as { name: string }).name;
      const del = await api('DELETE', `/proxies/fuzz/toxics/${encodeURIComponent(name)}`);
      if (del.status !== 204) wrong.push(`${c.name}: deleting the toxic answered ${del.status}`);
    }
    const after = await probe();
    if (after !== 'echo') wrong.push(`${c.name}: after the toxic is gone the proxy gives ${after}`);
  }
  assert.deepEqual(wrong, []);
});

test('bad updates of proxies and toxics are answered and change nothing', async () => {
  const created = await api('POST', '/proxies/fuzz/toxics', {
    type: 'latency',
    name: 'upd',
    attributes: { latency: 1 },
  });
  assert.equal(created.status, 200);
  const answers = [
    await api('POST', '/proxies/fuzz/toxics/upd', undefined, '{"attributes":'),
    await api('POST', '/proxies/fuzz/toxics/upd', { attributes: { latency: 'x' } }),
    await api('POST', '/proxies/fuzz/toxics/nope', { attributes: { latency: 1 } }),
    await api('POST', '/proxies/fuzz', undefined, '{"enabled": "maybe"}'),
    await api('POST', '/proxies/nope', { enabled: false }),
    await api('POST', '/proxies', { name: '', upstream: 'x:1' }),
    await api('POST', '/populate', undefined, '{"not":"a list"}'),
    await api('POST', '/populate', [{ name: 'p', listen: 'nowhere', upstream: 5 }]),
    await api('PUT', '/proxies'),
    await api('GET', '/nothing/here'),
  ].map((a) => a.status);
  assert.ok(
    answers.every((s) => s >= 400 && s < 500),
    `every bad request is a client error: ${answers.join(', ')}`,
  );
  // Toxiproxy answers a listen error with 500 (docs/proxy.md#http-api); nothing else changes.
  const badListen = await api('POST', '/proxies', {
    name: 'bad-listen',
    listen: 'nowhere:-1',
    upstream: 'x:1',
  });
  assert.ok([400, 500].includes(badListen.status), `bad listen: ${badListen.status}`);
  assert.equal((await api('DELETE', '/proxies/fuzz/toxics/upd')).status, 204);
  assert.deepEqual((await api('GET', '/proxies/fuzz/toxics')).body, []);
});

test('hostile framing on the API port is answered within a bound', async () => {
  const port = server.port;
  const cases = [
    Buffer.from([0, 1, 2, 3, 13, 10, 13, 10]),
    `GET /version HTTP/1.1\r\nHost: x\r\nx-big: ${'y'.repeat(20_000)}\r\n\r\n`,
    'POST /proxies HTTP/1.1\r\nHost: x\r\ncontent-length: -1\r\n\r\n',
    'POST /proxies HTTP/1.1\r\nHost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
    // A body over the API's 1 MiB limit, sent in full.
    `POST /proxies/fuzz/toxics HTTP/1.1\r\nHost: x\r\ncontent-length: ${2 * 1024 * 1024 + 2}\r\n\r\n"${'x'.repeat(2 * 1024 * 1024)}"`,
  ];
  for (const send of cases) {
    const a = await rawExchange(port, { send, timeoutMs: ANSWER_MS });
    assert.ok(!a.timedOut && (a.status !== undefined ? a.status >= 400 : a.closed), JSON.stringify(a));
  }
  assert.equal((await api('GET', '/version')).status, 200);
  assert.equal(await probe(), 'echo');
});
