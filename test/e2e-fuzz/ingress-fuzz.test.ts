// The ingress fuzz corpus: hostile bytes on raw sockets and bad arguments against a real
// ingress of a real cluster (child processes). Every case must be answered within its
// bound (or the connection closed cleanly, for bytes that are not HTTP), the ingress and
// processors stay up, a good call works afterwards, and nothing is left pending.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, TestCluster } from '../helpers/cluster.js';
import { scrape, sumSamples } from '../../src/telemetry/prom-text.js';
import { limits } from '../../src/protocol/limits.js';
import { post, postBytes, rawExchange, type RawAnswer } from './raw-http.js';

/** The ingress's --receive-timeout-ms here: slow senders are cut off after this. */
const RECEIVE_MS = 1500;
/** Bound on an answer to a request that arrived whole. */
const ANSWER_MS = 5000;

let cluster: TestCluster;
let port: number;
before(async () => {
  cluster = await TestCluster.start({
    processors: 2,
    partitions: 2,
    ingressArgs: ['--receive-timeout-ms', String(RECEIVE_MS)],
  });
  await cluster.waitForLeaders();
  port = Number(new URL(cluster.url).port);
});
after(() => cluster?.stop());

interface Case {
  name: string;
  send: string | Buffer | (string | Buffer)[];
  pauseMs?: number;
  /** Acceptable statuses; 'close' = a clean close without an answer is fine too. */
  expect: (number | 'close')[];
  timeoutMs?: number;
}

const json = (v: unknown): string => JSON.stringify(v);
const big = (n: number): string => 'x'.repeat(n);

const framing: Case[] = [
  { name: 'non-HTTP bytes', send: Buffer.from([0, 1, 2, 0xff, 13, 10, 13, 10]), expect: [400, 'close'] },
  {
    name: 'TLS hello on the plain port',
    send: Buffer.from('16030100a5010000a10303', 'hex'),
    expect: [400, 'close'],
  },
  { name: 'request line only garbage', send: 'HELLO\r\n\r\n', expect: [400, 'close'] },
  { name: 'unknown method', send: 'BREW /Echo/echo HTTP/1.1\r\nHost: x\r\n\r\n', expect: [400, 405] },
  { name: 'DELETE a handler', send: 'DELETE /Echo/echo HTTP/1.1\r\nHost: x\r\n\r\n', expect: [405] },
  { name: 'OPTIONS *', send: 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n', expect: [404, 405] },
  {
    name: 'missing Host on HTTP/1.1',
    send: 'POST /Echo/echo HTTP/1.1\r\ncontent-length: 1\r\n\r\n1',
    expect: [400],
  },
  {
    name: 'HTTP/1.0 without Host',
    send: 'POST /Echo/echo HTTP/1.0\r\ncontent-length: 1\r\n\r\n1',
    expect: [200],
  },
  {
    name: 'HTTP/2 preface on HTTP/1.1',
    send: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
    expect: [400, 404, 405, 'close'],
  },
  {
    name: 'negative Content-Length',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ncontent-length: -5\r\n\r\n',
    expect: [400],
  },
  {
    name: 'non-numeric Content-Length',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ncontent-length: ten\r\n\r\n',
    expect: [400],
  },
  {
    name: 'two different Content-Lengths',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n12',
    expect: [400],
  },
  {
    name: 'Content-Length and chunked together (smuggling)',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ncontent-length: 4\r\ntransfer-encoding: chunked\r\n\r\n1\r\n1\r\n0\r\n\r\n',
    expect: [400],
  },
  {
    name: 'Content-Length larger than the body (lying), then silence',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ncontent-length: 100\r\n\r\n{"a":1}',
    expect: [408, 'close'],
    timeoutMs: RECEIVE_MS + 3000,
  },
  {
    name: 'huge declared Content-Length',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ncontent-length: 99999999999\r\n\r\n',
    expect: [413],
  },
  {
    name: 'Content-Length beyond 2^53',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ncontent-length: 999999999999999999999999\r\n\r\n',
    expect: [400, 413],
  },
  {
    name: 'a body over the limit, sent in full',
    send: post('/Echo/echo', json(big(limits.payloadBytesMax + 10))),
    expect: [413, 'close'],
  },
  {
    name: 'chunked, well-formed, with an extension and a trailer',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ntransfer-encoding: chunked\r\n\r\n1;ext=1\r\n7\r\n0\r\nx-trailer: y\r\n\r\n',
    expect: [200],
  },
  {
    name: 'chunked, bad chunk size',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n1\r\n0\r\n\r\n',
    expect: [400],
  },
  {
    name: 'chunked, chunk size over 2^64',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ntransfer-encoding: chunked\r\n\r\nfffffffffffffffffff\r\n1\r\n',
    expect: [400, 413],
  },
  {
    name: 'chunked, a huge chunk size then its bytes in part',
    send:
      'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ntransfer-encoding: chunked\r\n\r\nffffffff\r\n' + big(70_000),
    expect: [408, 413, 'close'],
    timeoutMs: RECEIVE_MS + 3000,
  },
  {
    name: 'chunked, no final chunk, then silence',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ntransfer-encoding: chunked\r\n\r\n1\r\n1\r\n',
    expect: [408, 'close'],
    timeoutMs: RECEIVE_MS + 3000,
  },
  {
    name: 'chunked, chunks over the body limit',
    send: [
      'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ntransfer-encoding: chunked\r\n\r\n',
      ...Array.from({ length: 6 }, () => `10000\r\n${big(0x10000)}\r\n`),
      '0\r\n\r\n',
    ],
    expect: [413, 'close'],
  },
  {
    name: 'transfer-encoding gzip, chunked',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\ntransfer-encoding: gzip, chunked\r\n\r\n1\r\n1\r\n0\r\n\r\n',
    expect: [200, 400],
  },
  {
    name: 'huge header (over 16 KiB)',
    send: `POST /Echo/echo HTTP/1.1\r\nHost: x\r\nx-big: ${big(20_000)}\r\ncontent-length: 1\r\n\r\n1`,
    expect: [431],
  },
  {
    name: 'thousands of small headers',
    send: `POST /Echo/echo HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `x-h${i}: v\r\n`).join('')}content-length: 1\r\n\r\n1`,
    expect: [431, 200],
  },
  {
    name: 'header without a colon',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\nnonsense\r\ncontent-length: 1\r\n\r\n1',
    expect: [400],
  },
  {
    name: 'NUL in a header value',
    send: 'POST /Echo/echo HTTP/1.1\r\nHost: x\r\nx-a: a\0b\r\ncontent-length: 1\r\n\r\n1',
    expect: [400],
  },
  {
    name: 'slow sender that finishes within the bound',
    send: ['POST /Echo/echo HTTP/1.1\r\n', 'Host: x\r\n', 'content-length: 1\r\n', '\r\n', '7'],
    pauseMs: 150,
    expect: [200],
  },
  {
    name: 'slowloris: headers never finished',
    send: [
      'POST /Echo/echo HTTP/1.1\r\n',
      'Host: x\r\n',
      'x-a: 1\r\n',
      'x-b: 2\r\n',
      'x-c: 3\r\n',
      'x-d: 4\r\n',
    ],
    pauseMs: 400,
    expect: [408, 'close'],
    timeoutMs: RECEIVE_MS + 3000,
  },
  {
    name: 'pipelined requests, a bad one in the middle',
    send: post('/Echo/echo', '1') + 'GARBAGE\r\n\r\n' + post('/Echo/echo', '2'),
    expect: [200, 400],
  },
  { name: 'bad JSON', send: post('/Echo/echo', '{"a":'), expect: [400] },
  { name: 'JSON with a BOM', send: post('/Echo/echo', '\ufeff1'), expect: [200, 400] },
  {
    name: 'invalid UTF-8 in the body',
    send: postBytes('/Echo/echo', Buffer.from([0x22, 0xc3, 0x28, 0x22])),
    expect: [200, 400],
  },
  {
    name: 'deeply nested JSON',
    send: post('/Echo/echo', '['.repeat(50_000) + ']'.repeat(50_000)),
    expect: [400],
  },
  {
    name: 'JSON nested at the bound',
    send: post('/Echo/echo', '['.repeat(limits.jsonDepthMax) + ']'.repeat(limits.jsonDepthMax)),
    expect: [200],
  },
  { name: 'broken %-escape in the path', send: post('/Echo/%E0%A4%A', '1'), expect: [400] },
  { name: 'path that is not a URL', send: post('//[', '1'), expect: [400, 404] },
  { name: 'absolute-form target', send: post('http://elsewhere/Echo/echo', '1'), expect: [200, 400, 404] },
  { name: 'unknown service', send: post('/Nope/echo', '1'), expect: [404] },
  { name: 'unknown handler', send: post('/Echo/nope', '1'), expect: [404] },
  { name: 'the root path', send: post('/', '1'), expect: [404] },
  {
    name: 'a path of many segments',
    send: post('/' + Array.from({ length: 500 }, () => 'a').join('/'), '1'),
    expect: [404],
  },
  { name: 'a very long path', send: post('/Echo/' + big(12_000), '1'), expect: [404, 414, 431] },
  { name: 'dot segments', send: post('/Echo/../Echo/echo', '1'), expect: [200, 404] },
  {
    name: 'bad invocation id',
    send: 'GET /invocations/xyz/output HTTP/1.1\r\nHost: x\r\n\r\n',
    expect: [400],
  },
  {
    name: 'invocation id with a bad partition key',
    send: 'GET /invocations/inv_zzzzzzzz_abc/attach HTTP/1.1\r\nHost: x\r\n\r\n',
    expect: [400],
  },
  {
    name: 'invocation id too long',
    send: `GET /invocations/inv_00000000_${'a'.repeat(500)}/output HTTP/1.1\r\nHost: x\r\n\r\n`,
    expect: [400],
  },
  {
    name: 'unknown invocation',
    send: 'GET /invocations/inv_00000000_abc/attach HTTP/1.1\r\nHost: x\r\n\r\n',
    expect: [404],
  },
  { name: 'POST to an output', send: post('/invocations/inv_00000000_abc/output', '1'), expect: [405] },
  {
    name: 'bad traceparent',
    send: post('/Echo/echo', '1', { traceparent: 'zz-not-a-trace' }),
    expect: [200],
  },
  {
    name: 'all-zero traceparent',
    send: post('/Echo/echo', '1', { traceparent: `00-${'0'.repeat(32)}-${'0'.repeat(16)}-01` }),
    expect: [200],
  },
  {
    name: 'long traceparent',
    send: post('/Echo/echo', '1', { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01-${big(8000)}` }),
    expect: [200],
  },
  {
    name: 'two traceparents',
    send: post('/Echo/echo', '1', {
      traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
      TraceParent: 'x',
    }),
    expect: [200],
  },
  { name: 'expect: 100-continue', send: post('/Echo/echo', '1', { expect: '100-continue' }), expect: [200] },
  { name: 'expect: something else', send: post('/Echo/echo', '1', { expect: 'teapot' }), expect: [417] },
  {
    name: 'a bare LF request',
    send: 'POST /Echo/echo HTTP/1.1\nHost: x\ncontent-length: 1\n\n1',
    expect: [200, 400],
  },
];

function accepted(c: Case, a: RawAnswer): boolean {
  if (a.timedOut) return false;
  if (a.status !== undefined) return c.expect.includes(a.status);
  return a.closed && c.expect.includes('close');
}

test('every framing case is answered within its bound', async () => {
  const answers = await Promise.all(
    framing.map(async (c) => {
      const a = await rawExchange(port, {
        send: c.send,
        timeoutMs: c.timeoutMs ?? ANSWER_MS,
        ...(c.pauseMs !== undefined ? { pauseMs: c.pauseMs } : {}),
      });
      return { c, a };
    }),
  );
  const wrong = answers
    .filter(({ c, a }) => !accepted(c, a))
    .map(
      ({ c, a }) =>
        `${c.name}: expected ${c.expect.join('|')}, got ${a.timedOut ? 'no answer' : (a.status ?? 'close')} in ${Math.round(a.ms)} ms ${JSON.stringify(a.head.slice(0, 60))}`,
    );
  assert.deepEqual(wrong, []);
});

interface ArgCase {
  name: string;
  path: string;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  status: number;
  field?: string;
}

const args: ArgCase[] = [
  { name: 'Sleep.ms a string', path: '/Sleep/sleep', body: { ms: 'soon' }, status: 400, field: 'ms' },
  { name: 'Sleep.ms 1e15', path: '/Sleep/sleep', body: { ms: 1e15 }, status: 400, field: 'ms' },
  {
    name: 'Sleep.ms just over the bound',
    path: '/Sleep/sleep',
    body: { ms: limits.sleepMsMax + 1 },
    status: 400,
    field: 'ms',
  },
  { name: 'Sleep.ms negative', path: '/Sleep/sleep', body: { ms: -1 }, status: 400, field: 'ms' },
  { name: 'Sleep.ms fractional', path: '/Sleep/sleep', body: { ms: 1.5 }, status: 400, field: 'ms' },
  { name: 'Sleep.ms missing', path: '/Sleep/sleep', body: {}, status: 400, field: 'ms' },
  { name: 'Sleep with an array', path: '/Sleep/sleep', body: [5], status: 400, field: 'body' },
  { name: 'Sleep with no body', path: '/Sleep/sleep', raw: '', status: 400, field: 'body' },
  { name: 'Sleep.ms at 0', path: '/Sleep/sleep', body: { ms: 0 }, status: 200 },
  {
    name: 'Flaky.failFirst a billion',
    path: '/Flaky/call',
    body: { failFirst: 1e9 },
    status: 400,
    field: 'failFirst',
  },
  {
    name: 'Flaky.failFirst a string',
    path: '/Flaky/call',
    body: { failFirst: 'x' },
    status: 400,
    field: 'failFirst',
  },
  { name: 'Flaky with a number body', path: '/Flaky/call', body: 3, status: 400, field: 'body' },
  {
    name: 'Counter.delta a string',
    path: '/Counter/fuzz/add',
    body: { delta: 'x' },
    status: 400,
    field: 'delta',
  },
  {
    name: 'Counter.delta 1e300',
    path: '/Counter/fuzz/add',
    body: { delta: 1e300 },
    status: 400,
    field: 'delta',
  },
  {
    name: 'Counter key over the bound',
    path: `/Counter/${big(limits.keyBytesMax + 1)}/add`,
    body: { delta: 1 },
    status: 400,
    field: 'key',
  },
  {
    name: 'Counter key at the bound',
    path: `/Counter/${big(limits.keyBytesMax)}/add`,
    body: { delta: 1 },
    status: 200,
  },
  {
    name: 'idempotency key of 8,000 bytes',
    path: '/Echo/echo',
    body: 1,
    headers: { 'idempotency-key': big(8000) },
    status: 400,
    field: 'idempotency-key',
  },
  {
    name: 'idempotency key at the bound',
    path: '/Echo/echo',
    body: 1,
    headers: { 'idempotency-key': big(limits.idempotencyKeyBytesMax) },
    status: 200,
  },
  {
    name: 'send with a bad argument',
    path: '/Sleep/sleep/send',
    body: { ms: 'soon' },
    status: 400,
    field: 'ms',
  },
  // At the body bound, with JSON that doubles when escaped into a log record: still answered.
  {
    name: 'a body at the limit that escaping doubles',
    path: '/Echo/echo',
    raw: json('"'.repeat(limits.payloadBytesMax / 2 - 2)),
    status: 200,
  },
];

test('every bad argument is a 400 naming its field, before anything is appended', async () => {
  const wrong: string[] = [];
  for (const a of args) {
    const res = await call(cluster.url, a.path, a.body, {
      timeoutMs: ANSWER_MS * 2,
      ...(a.raw !== undefined ? { raw: a.raw } : {}),
      ...(a.headers ? { headers: a.headers } : {}),
    }).catch((e: unknown) => ({ status: -1, body: String(e), invocationId: null }));
    const field = (res.body as { field?: unknown } | null)?.field;
    if (res.status !== a.status || (a.field !== undefined && field !== a.field)) {
      wrong.push(
        `${a.name}: expected ${a.status} ${a.field ?? ''}, got ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`,
      );
    }
  }
  assert.deepEqual(wrong, []);
});

test('afterwards every service is up, a good call works and nothing is pending', async () => {
  assert.ok(cluster.ingress.isRunning(), 'the ingress is running');
  assert.ok(cluster.log.isRunning(), 'the log server is running');
  for (const p of cluster.processors) assert.ok(p?.isRunning(), `${p?.ready.node} is running`);
  assert.deepEqual(
    [
      (await call(cluster.url, '/Echo/echo', { ok: 1 })).status,
      (await call(cluster.url, '/Sleep/sleep', { ms: 5 })).body,
    ],
    [200, { slept: 5 }],
  );
  // Aborted requests are counted down when their sockets close: allow a moment.
  const deadline = Date.now() + 5000;
  let pending: number[];
  for (;;) {
    pending = [
      await cluster.ingressMetric('limbo_ingress_pending_requests'),
      ...(await Promise.all(
        cluster.processors.map(async (p) =>
          sumSamples(await scrape(p?.ready.addresses.metrics as string), 'limbo_processor_pending_rpcs'),
        ),
      )),
    ];
    if (pending.every((v) => v === 0) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(
    pending,
    pending.map(() => 0),
    'ingress and processor pending gauges',
  );
});

test('the legacy protocol answers bad arguments the same way', async () => {
  await using legacy = await TestCluster.start({ processors: 1, partitions: 1, protocol: 'legacy' });
  await legacy.waitForLeaders();
  const bad = await call(legacy.url, '/Sleep/sleep', { ms: 'soon' });
  assert.deepEqual([bad.status, (bad.body as { field: string }).field], [400, 'ms']);
  assert.equal((await call(legacy.url, '/Sleep/sleep', { ms: 1e15 }, { timeoutMs: ANSWER_MS })).status, 400);
  assert.deepEqual((await call(legacy.url, '/Sleep/sleep', { ms: 5 })).body, { slept: 5 });
  assert.equal(await legacy.ingressMetric('limbo_ingress_pending_requests'), 0);
});
