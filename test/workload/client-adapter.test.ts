// The workload through a client adapter: a system whose clients do not speak HTTP. A small
// real server speaks JSON lines over TCP (one request per line, answered by id, out of order
// if it likes); the adapter under test is a few lines of net.Socket code, as a user's would be.
// What is checked: ops are recorded as over HTTP (ok / fail / unknown, invocation ids, counter
// values, final reads), each client keeps one session and every session is closed at stop,
// limbo's clock bounds an adapter that never answers (client_timeout), a client that gives
// up (gave up, then the same key again), the run's stop (left open), a refused connect
// (fail, then a new connect), and final reads refused for a while (asked again until answered).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import { createHistoryRecorder } from '../../src/workload/history.js';
import { startWorkload } from '../../src/workload/workload.js';
import {
  AdapterClient,
  defineClientAdapter,
  type ClientAdapter,
  type PerformResult,
} from '../../src/workload/client-adapter.js';
import { acknowledgedEffectsPresent, exactlyOnce, noClientLeftHanging } from '../../src/checkers/index.js';
import type { ClientOp } from '../../src/workload/client-api.js';
import type { RunData } from '../../src/run-data/run-data.js';

interface LineRequest {
  id: number;
  op: ClientOp['op'];
  service: string;
  key: string;
  handler: string;
  body?: unknown;
  idempotencyKey?: string;
  invocationId?: string;
}

/** A toy key-value service over JSON lines: dedups by idempotency key; `mode` changes how it answers. */
async function startLineServer(t: TestContext) {
  const state = {
    mode: 'normal' as 'normal' | 'silent' | 'reject',
    /** Counter reads still to refuse (as a system with no leader yet refuses them). */
    failReads: 0,
    connections: 0,
    open: 0,
    requests: [] as LineRequest[],
  };
  const counters = new Map<string, number>();
  const done = new Map<string, unknown>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    state.connections++;
    state.open++;
    sockets.add(socket);
    socket.on('close', () => {
      state.open--;
      sockets.delete(socket);
    });
    socket.on('error', () => undefined);
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const req = JSON.parse(buffered.slice(0, nl)) as LineRequest;
        buffered = buffered.slice(nl + 1);
        state.requests.push(req);
        if (state.mode === 'silent') continue;
        if (state.mode === 'reject') {
          socket.write(JSON.stringify({ id: req.id, error: 'not leader' }) + '\n');
          continue;
        }
        const inv = `line:${req.idempotencyKey ?? req.id}`;
        let answer: Record<string, unknown> = { id: req.id, invocationId: inv };
        if (req.op === 'counterAdd') {
          if (!done.has(inv)) {
            const delta = (req.body as { delta: number }).delta;
            counters.set(req.key, (counters.get(req.key) ?? 0) + delta);
            done.set(inv, counters.get(req.key));
          }
          answer.value = done.get(inv);
        } else if (req.op === 'counterGet' && state.failReads > 0) {
          state.failReads--;
          answer = { id: req.id, error: 'no leader' };
        } else if (req.op === 'counterGet') answer = { id: req.id, value: counters.get(req.key) ?? 0 };
        else if (req.op === 'attach')
          answer = done.has(req.invocationId ?? '')
            ? { id: req.id, invocationId: req.invocationId, output: 'done' }
            : { id: req.id, error: `no invocation ${req.invocationId ?? '?'}` };
        else if (!done.has(inv)) done.set(inv, req.body);
        // Answers out of order: a later request may be answered first.
        setTimeout(() => socket.write(JSON.stringify(answer) + '\n'), Math.floor(Math.random() * 5));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { state, counters, done, url: `http://127.0.0.1:${port}` };
}

/** The adapter a user would write for the line protocol: one socket per session, replies matched by id. */
const lineAdapter: ClientAdapter = defineClientAdapter({
  name: 'lines',
  connect: async ({ address }) => {
    const [host, port] = address.split(':');
    const socket = net.connect(Number(port), host);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const waiting = new Map<number, (answer: Record<string, unknown>) => void>();
    let next = 0;
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const answer = JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>;
        buffered = buffered.slice(nl + 1);
        waiting.get(answer['id'] as number)?.(answer);
        waiting.delete(answer['id'] as number);
      }
    });
    socket.on('error', () => undefined);
    return {
      perform: (op, ctx) =>
        new Promise<PerformResult>((resolve) => {
          const id = next++;
          waiting.set(id, (a) =>
            resolve(
              typeof a['error'] === 'string'
                ? { outcome: 'fail', error: a['error'] }
                : {
                    outcome: 'ok',
                    ...(typeof a['value'] === 'number' ? { value: a['value'] } : {}),
                    ...(typeof a['invocationId'] === 'string' ? { invocationId: a['invocationId'] } : {}),
                  },
            ),
          );
          ctx.signal.addEventListener('abort', () => waiting.delete(id), { once: true });
          const req: LineRequest = {
            id,
            op: op.op,
            service: op.target.service,
            key: op.target.key,
            handler: op.target.handler,
            body: op.body,
            ...(op.idempotencyKey !== undefined ? { idempotencyKey: op.idempotencyKey } : {}),
            ...(op.invocationId !== undefined ? { invocationId: op.invocationId } : {}),
          };
          socket.write(JSON.stringify(req) + '\n');
        }),
      close: () =>
        new Promise<void>((r) => {
          socket.once('close', () => r());
          socket.end();
        }),
    };
  },
});

function runOf(history: ReturnType<typeof createHistoryRecorder>): RunData {
  const end = Math.max(...history.ops.map((o) => o.timeMs)) + 1;
  return {
    suite: 't',
    target: 'lines',
    seed: 1,
    phases: { startedAtWall: '', healedAtMs: 0, deadlineMs: end },
    history: [...history.ops],
    series: [],
    faults: [],
  };
}

test('a workload through a client adapter: every op recorded as over HTTP, one session per client, all closed at stop', async (t) => {
  const server = await startLineServer(t);
  const history = createHistoryRecorder(createClock());
  const workload = startWorkload({
    concurrency: 3,
    mix: { call: 0.4, send: 0.2, counterAdd: 0.3, idempotentRetry: 0.1 },
    baseUrls: [server.url],
    adapter: lineAdapter,
    random: createRandom(11),
    history,
  });
  const deadline = performance.now() + 10_000;
  while (workload.completed() < 60 && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  await workload.stop(2000);
  await workload.finalReads();
  const ends = history.ops.filter((o) => o.type !== 'invoke');
  assert.ok(ends.length >= 60, `${ends.length} ops answered`);
  assert.ok(
    ends.every((o) => o.type === 'ok'),
    JSON.stringify(ends.find((o) => o.type !== 'ok')),
  );
  const kinds = new Set(history.ops.map((o) => o.kind));
  for (const k of ['call', 'send', 'counterAdd', 'counterGet'] as const)
    assert.ok(kinds.has(k), `no ${k} op`);
  // A send is a send then an attach to the invocation the send named.
  const attaches = server.state.requests.filter((r) => r.op === 'attach');
  assert.ok(attaches.length > 0 && attaches.every((r) => r.invocationId?.startsWith('line:')));
  // The history keeps the op as the adapter got it, and the counter values it answered.
  const add = history.ops.find((o) => o.type === 'ok' && o.kind === 'counterAdd');
  assert.equal(typeof add?.response?.value, 'number');
  const finals = history.ops.filter((o) => o.type === 'ok' && o.kind === 'counterGet');
  assert.ok(finals.length > 0);
  for (const f of finals) assert.equal(f.response?.value, server.counters.get(f.request?.counterKey ?? ''));
  assert.match(history.ops.find((o) => o.type === 'invoke')?.request?.path ?? '', /^lines:/);
  assert.equal(exactlyOnce().check(runOf(history)).verdict, 'pass');
  // 3 clients, one session each, and one for the final reads; none left open.
  assert.equal(server.state.connections, 4);
  const closedBy = performance.now() + 2000;
  while (server.state.open > 0 && performance.now() < closedBy) await new Promise((r) => setTimeout(r, 10));
  assert.equal(server.state.open, 0, 'every session closed');
});

test("limbo's clock bounds an adapter: silence is a client timeout, a refusal fails, a throw is unknown, a bad answer is unknown", async (t) => {
  const server = await startLineServer(t);
  const call: ClientOp = { op: 'call', target: { service: 'Echo', key: '', handler: 'echo' }, body: {} };
  const client = new AdapterClient(lineAdapter, {
    address: new URL(server.url).host,
    url: server.url,
    client: 0,
  });
  t.after(() => client.close());
  server.state.mode = 'silent';
  const t0 = performance.now();
  assert.deepEqual(await client.perform(call, { timeoutMs: 200, traceparent: '' }), { stopped: 'timeout' });
  assert.ok(performance.now() - t0 < 2000);
  server.state.mode = 'reject';
  const refused = await client.perform(call, { timeoutMs: 2000, traceparent: '' });
  assert.deepEqual(refused, { result: { outcome: 'fail', error: 'not leader' } });

  const throwing = new AdapterClient(
    defineClientAdapter({
      name: 'throws',
      connect: () => Promise.resolve({ perform: () => Promise.reject(new Error('boom')), close: () => {} }),
    }),
    { address: 'x:1', url: 'http://x:1', client: 0 },
  );
  assert.deepEqual(await throwing.perform(call, { timeoutMs: 500, traceparent: '' }), {
    result: { outcome: 'unknown', error: 'boom' },
  });
  const bad = new AdapterClient(
    defineClientAdapter({
      name: 'shapeless',
      connect: () =>
        Promise.resolve({
          perform: () => Promise.resolve({ fine: true } as unknown as PerformResult),
          close: () => {},
        }),
    }),
    { address: 'x:1', url: 'http://x:1', client: 0 },
  );
  const r = await bad.perform(call, { timeoutMs: 500, traceparent: '' });
  assert.ok('result' in r && r.result.outcome === 'unknown' && /shapeless/.test(r.result.error ?? ''));
});

test('a refused connect fails the op (nothing was sent) and the next op connects again', async (t) => {
  // A port nobody listens on, then a server on it.
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const call: ClientOp = { op: 'call', target: { service: 'Echo', key: '', handler: 'echo' }, body: {} };
  const client = new AdapterClient(lineAdapter, {
    address: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}`,
    client: 0,
  });
  t.after(() => client.close());
  const first = await client.perform(call, { timeoutMs: 2000, traceparent: '' });
  assert.ok(
    'result' in first && first.result.outcome === 'fail' && /connect failed/.test(first.result.error ?? ''),
  );
  const accepted = { n: 0 };
  const server = net.createServer((s) => {
    accepted.n++;
    s.on('data', (d: Buffer) => {
      const req = JSON.parse(d.toString().trim()) as LineRequest;
      s.write(JSON.stringify({ id: req.id }) + '\n');
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const second = await client.perform(call, { timeoutMs: 2000, traceparent: '' });
  assert.deepEqual(second, { result: { outcome: 'ok' } });
  assert.equal(accepted.n, 1);
  await client.close();
});

test('through an adapter, a client that gives up is recorded gave-up (unknown) and sends the same key again; the stop leaves silent ops open', async (t) => {
  const server = await startLineServer(t);
  server.state.mode = 'silent';
  const history = createHistoryRecorder(createClock());
  const workload = startWorkload({
    concurrency: 2,
    mix: { call: 1 },
    giveUp: { fraction: 1, afterMs: [50, 80], retry: 'same-key' },
    opTimeoutMs: 60_000,
    baseUrls: [server.url],
    adapter: lineAdapter,
    random: createRandom(3),
    history,
  });
  const deadline = performance.now() + 5000;
  while (history.ops.filter((o) => o.type === 'info').length < 2 && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  await workload.stop(100);
  const gaveUp = history.ops.filter((o) => o.type === 'info' && o.error?.code === 'aborted');
  assert.ok(gaveUp.length >= 2, JSON.stringify(history.ops));
  // Each given-up call was sent again with the same idempotency key (the retry is never given up).
  const keys = server.state.requests.map((r) => r.idempotencyKey);
  for (const k of new Set(keys)) assert.ok(keys.filter((x) => x === k).length <= 2);
  assert.ok(
    keys.some((k) => keys.filter((x) => x === k).length === 2),
    'a same-key retry',
  );
  // The retries were silent too: the run's stop left them open, which noClientLeftHanging sees.
  assert.ok(history.openOps().length >= 1);
  assert.equal(noClientLeftHanging().check(runOf(history)).verdict, 'fail');
});

test('after convergence every acknowledged invocation is attached again: one the system forgot since is lost', async (t) => {
  const server = await startLineServer(t);
  const history = createHistoryRecorder(createClock());
  const workload = startWorkload({
    concurrency: 3,
    mix: { call: 0.5, send: 0.5 },
    baseUrls: [server.url],
    adapter: lineAdapter,
    random: createRandom(12),
    history,
  });
  const deadline = performance.now() + 10_000;
  while (workload.completed() < 40 && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  await workload.stop(2000);
  // Every call and send was acknowledged, a send's own attach found it: the clients saw nothing
  // wrong. Then the system loses some of them (as a new primary without the old one's tail).
  const before = acknowledgedEffectsPresent().check(runOf(history));
  assert.equal(before.verdict, 'pass', before.summary);
  const acknowledged = [...server.done.keys()].filter((k) => k.startsWith('line:p'));
  assert.ok(acknowledged.length >= 40, `${acknowledged.length} invocations`);
  const forgotten = acknowledged.filter((_, i) => i % 3 === 0);
  for (const k of forgotten) server.done.delete(k);
  await workload.finalReads();
  const finals = history.ops.filter((o) => o.type === 'invoke' && o.kind === 'attach');
  assert.ok(finals.every((o) => o.request?.final === true));
  assert.equal(new Set(finals.map((o) => o.invocationId)).size, acknowledged.length);
  const after = acknowledgedEffectsPresent().check(runOf(history));
  assert.equal(after.verdict, 'fail', after.summary);
  assert.deepEqual([...(after.evidence.invocationIds ?? [])].sort(), [...forgotten].sort());
  assert.match(
    after.summary,
    new RegExp(
      `^${forgotten.length} acknowledged invocations were later not found .*after convergence ${acknowledged.length} attached again: ${acknowledged.length - forgotten.length} found, ${forgotten.length} not found$`,
    ),
  );
});

test('a final counter read the system refuses is asked again until it answers: exactlyOnce judges the answer', async (t) => {
  const server = await startLineServer(t);
  const history = createHistoryRecorder(createClock());
  const workload = startWorkload({
    concurrency: 2,
    mix: { counterAdd: 1 },
    counterKeys: 2,
    baseUrls: [server.url],
    adapter: lineAdapter,
    random: createRandom(21),
    history,
  });
  const deadline = performance.now() + 10_000;
  while (workload.completed() < 20 && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  await workload.stop(2000);
  // Still settling after the heal: the first six reads answer "no leader".
  server.state.failReads = 6;
  await workload.finalReads();
  const finals = history.ops.filter((o) => o.kind === 'counterGet' && o.request?.final === true);
  const keys = new Set(finals.map((o) => o.request?.counterKey));
  assert.equal(keys.size, 2);
  assert.equal(finals.filter((o) => o.type === 'fail').length, 6);
  // Each key's last final read answered ok, with the value the server holds.
  for (const key of keys) {
    const last = finals.filter((o) => o.request?.counterKey === key && o.type !== 'invoke').at(-1);
    assert.equal(last?.type, 'ok');
    assert.equal(last.response?.value, server.counters.get(key ?? ''));
  }
  const verdict = exactlyOnce().check(runOf(history));
  assert.equal(verdict.verdict, 'pass', verdict.summary);
});

test('a final counter read the system never answers is bounded: exactlyOnce is inconclusive saying what the read answered', async (t) => {
  const server = await startLineServer(t);
  const history = createHistoryRecorder(createClock());
  const workload = startWorkload({
    concurrency: 1,
    mix: { counterAdd: 1 },
    counterKeys: 1,
    baseUrls: [server.url],
    adapter: lineAdapter,
    random: createRandom(22),
    history,
  });
  const deadline = performance.now() + 10_000;
  while (workload.completed() < 5 && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  await workload.stop(2000);
  server.state.failReads = Number.MAX_SAFE_INTEGER;
  const started = performance.now();
  await workload.finalReads(undefined, 1000);
  const tookMs = performance.now() - started;
  assert.ok(tookMs < 5000, `final reads took ${tookMs} ms`);
  const finals = history.ops.filter(
    (o) => o.kind === 'counterGet' && o.request?.final === true && o.type !== 'invoke',
  );
  assert.ok(finals.length >= 2 && finals.every((o) => o.type === 'fail'), `${finals.length} final reads`);
  const verdict = exactlyOnce().check(runOf(history));
  assert.equal(verdict.verdict, 'inconclusive', verdict.summary);
  assert.match(verdict.summary, /the final read answered fail/);
});
