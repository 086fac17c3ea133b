import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import { createHistoryRecorder } from '../../src/workload/history.js';
import { startWorkload } from '../../src/workload/workload.js';
import { createHttpClient } from '../../src/workload/http-client.js';
import { callOp, counterAddOp, sendOp, sendRetryOp, type OpContext } from '../../src/workload/ops.js';
import { exactlyOnce, idempotentRetriesAgree, noClientLeftHanging } from '../../src/checkers/index.js';
import type { RunData } from '../../src/run-data/run-data.js';
import { startToyIngress } from '../helpers/toy-ingress.js';

function runDataOf(ops: readonly RunData['history'][number][], deadlineMs: number): RunData {
  return {
    suite: 't',
    target: 'toy',
    seed: 1,
    phases: { startedAtWall: '', healedAtMs: 0, deadlineMs },
    history: [...ops],
    series: [],
    faults: [],
  };
}

test('a seeded workload records every op as invoke then one outcome, and the same seed replays the same ops', async (t) => {
  const ingress = await startToyIngress();
  t.after(() => ingress.stop());
  const dir = mkdtempSync(join(tmpdir(), 'limbo-wl-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const runOnce = async (file: string) => {
    const clock = createClock();
    const history = createHistoryRecorder(clock, join(dir, file));
    const wl = startWorkload({
      baseUrls: [ingress.url],
      random: createRandom(99),
      history,
      concurrency: 1,
      opTimeoutMs: 5000,
    });
    while (history.completed() < 40) await new Promise((r) => setTimeout(r, 10));
    await wl.stop(5000);
    await wl.finalReads();
    await history.close();
    return history.ops;
  };
  const a = await runOnce('a.jsonl');
  const b = await runOnce('b.jsonl');
  const shape = (ops: typeof a) =>
    ops
      .filter((o) => o.type === 'invoke')
      .slice(0, 30)
      .map((o) => `${o.kind} ${o.request?.path} ${JSON.stringify(o.request?.body)}`);
  assert.deepEqual(shape(a), shape(b));
  assert.ok(new Set(a.map((o) => o.kind)).size >= 3, 'the mix draws several kinds');
  const invokes = a.filter((o) => o.type === 'invoke').length;
  assert.equal(a.length, invokes * 2, 'every invoke has exactly one completion');
  assert.ok(a.filter((o) => o.type !== 'invoke').every((o) => o.type === 'ok'));
  const lines = readFileSync(join(dir, 'a.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, a.length);
  const run = runDataOf(a, a[a.length - 1]!.timeMs + 1);
  assert.equal(noClientLeftHanging().check(run).verdict, 'pass');
  assert.equal(exactlyOnce().check(run).verdict, 'pass', exactlyOnce().check(run).summary);
  assert.notEqual(idempotentRetriesAgree().check(run).verdict, 'fail');
});

test('outcomes: 504 and resets are info with the invocation id, 404 and refused are fail, silence is a client timeout', async (t) => {
  const ingress = await startToyIngress();
  t.after(() => ingress.stop());
  const http = createHttpClient();
  t.after(() => http.close());
  const history = createHistoryRecorder(createClock());
  let n = 0;
  const ctx = (baseUrl: string): OpContext => ({
    http,
    history,
    random: createRandom(5),
    process: 0,
    baseUrl,
    opTimeoutMs: 300,
    counterKeys: ['a'],
    nextKey: () => `k${n++}`,
  });
  ingress.behaviour.status504 = true;
  let c = await callOp(ctx(ingress.url));
  assert.equal(c.type, 'info');
  assert.equal(c.error?.code, 'deadline_exceeded');
  assert.match(c.invocationId ?? '', /^inv_/);
  ingress.behaviour.status504 = false;
  ingress.behaviour.reset = true;
  c = await callOp(ctx(ingress.url));
  assert.deepEqual([c.type, c.error?.code], ['info', 'connection_error']);
  ingress.behaviour.reset = false;
  ingress.behaviour.hang = true;
  c = await callOp(ctx(ingress.url));
  assert.deepEqual([c.type, c.error?.code], ['info', 'client_timeout']);
  ingress.behaviour.hang = false;
  const nf = await http.request(ingress.url + '/Nope/x/y/z', { method: 'POST', timeoutMs: 1000 });
  assert.equal(nf.status, 404);
  // a port nobody listens on: bind one, note it, close it
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  c = await callOp(ctx(`http://127.0.0.1:${port}`));
  assert.equal(c.type, 'fail');
  // every op the client recorded has its invoke id known up front (idempotency keys)
  const invokes = history.ops.filter((o) => o.type === 'invoke');
  assert.ok(invokes.every((o) => o.invocationId !== undefined));
  assert.equal(history.inFlight(), 0);
});

test('counter adds are retried once on info with the same key, and a double-applying server fails exactlyOnce', async (t) => {
  const ingress = await startToyIngress({ doubleApply: true });
  t.after(() => ingress.stop());
  const http = createHttpClient();
  t.after(() => http.close());
  const history = createHistoryRecorder(createClock());
  let n = 0;
  const ctx: OpContext = {
    http,
    history,
    random: createRandom(5),
    process: 0,
    baseUrl: ingress.url,
    opTimeoutMs: 2000,
    counterKeys: ['a'],
    nextKey: () => `k${n++}`,
  };
  // a 504 leaves the add unknown: the client retries once with the same key
  ingress.behaviour.status504 = true;
  const c = await counterAddOp(ctx);
  assert.equal(c.type, 'info');
  ingress.behaviour.status504 = false;
  const adds = history.ops.filter((o) => o.type === 'invoke' && o.kind === 'counterAdd');
  assert.equal(adds.length, 2, 'one retry with the same key');
  assert.equal(adds[0]!.request?.idempotencyKey, adds[1]!.request?.idempotencyKey);
  // an acknowledged add, then the same idempotency key once more: the buggy server applies it twice
  assert.equal((await counterAddOp(ctx)).type, 'ok');
  const last = history.ops[history.ops.length - 1]!.request!;
  await http.request(ingress.url + last.path, {
    method: 'POST',
    headers: { 'idempotency-key': last.idempotencyKey! },
    body: last.body,
    timeoutMs: 1000,
  });
  const id = history.invoke(0, 'counterGet', {
    method: 'POST',
    path: '/Counter/a/get',
    counterKey: 'a',
    final: true,
  });
  history.complete(id, { type: 'ok', response: { value: ingress.counters.get('a') ?? 0 } });
  const r = exactlyOnce().check(runDataOf(history.ops, 1e9));
  assert.equal(r.verdict, 'fail', r.summary);
});

test('stopping with ops in flight leaves them open (hung) and closes their sockets', async (t) => {
  const ingress = await startToyIngress({ hang: true });
  t.after(() => ingress.stop());
  const history = createHistoryRecorder(createClock());
  const wl = startWorkload({
    baseUrls: [ingress.url],
    random: createRandom(3),
    history,
    concurrency: 3,
    opTimeoutMs: 60_000,
    mix: { call: 1 },
  });
  while (history.inFlight() < 3) await new Promise((r) => setTimeout(r, 10));
  await wl.stop(100);
  assert.equal(history.inFlight(), 3);
  const r = noClientLeftHanging().check(runDataOf(history.ops, 1e9));
  assert.equal(r.verdict, 'fail');
  assert.equal(r.evidence.invocationIds?.length, 3);
});

test('attachAfterMs: a send is attached to that long after it was accepted, and at once without it', async (t) => {
  const seen: { path: string; atMs: number }[] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    seen.push({ path, atMs: performance.now() });
    req.resume();
    req.on('end', () => {
      const attach = /^\/invocations\/([^/]+)\/attach$/.exec(path);
      const id = attach ? decodeURIComponent(attach[1]!) : 'inv_attach_after';
      res.writeHead(attach ? 200 : 202, { 'content-type': 'application/json', 'x-limbo-invocation-id': id });
      res.end(JSON.stringify(attach ? { ok: true } : { invocationId: id, status: 'Accepted' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const http2 = createHttpClient({ maxSockets: 4 });
  t.after(() => http2.close());
  const history = createHistoryRecorder(createClock());
  let n = 0;
  const gapOf = async (attachAfterMs?: number): Promise<number> => {
    seen.length = 0;
    const c = await sendOp({
      http: http2,
      history,
      random: createRandom(3),
      process: 0,
      baseUrl: url,
      opTimeoutMs: 5000,
      counterKeys: ['a'],
      nextKey: () => `s${n++}`,
      ...(attachAfterMs !== undefined ? { attachAfterMs } : {}),
    });
    assert.equal(c.type, 'ok');
    const send = seen.find((s) => s.path.endsWith('/send'));
    const attach = seen.find((s) => s.path.endsWith('/attach'));
    assert.ok(send && attach, `both requests reached the server: ${seen.map((s) => s.path).join(', ')}`);
    return attach.atMs - send.atMs;
  };
  const later = await gapOf(400);
  assert.ok(later >= 395, `attached ${later.toFixed(0)} ms after the send`);
  const atOnce = await gapOf();
  assert.ok(atOnce < later, `without it the attach follows at once (${atOnce.toFixed(0)} ms)`);
  // An abort during the wait ends the op instead of keeping it waiting.
  const abort = new AbortController();
  const pending = sendOp({
    http: http2,
    history,
    random: createRandom(4),
    process: 0,
    baseUrl: url,
    opTimeoutMs: 5000,
    counterKeys: ['a'],
    nextKey: () => `s${n++}`,
    attachAfterMs: 60_000,
    signal: abort.signal,
  });
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  abort.abort();
  const aborted = await pending;
  assert.ok(performance.now() - t0 < 2000, 'the op ended soon after the abort');
  assert.notEqual(aborted.type, 'ok');
});

test('sendRetry: the same send twice with one idempotency key, both attached, one invocation', async (t) => {
  const ingress = await startToyIngress();
  t.after(() => ingress.stop());
  const client = createHttpClient();
  t.after(() => client.close());
  const history = createHistoryRecorder(createClock());
  const c = await sendRetryOp({
    http: client,
    history,
    random: createRandom(11),
    process: 0,
    baseUrl: ingress.url,
    opTimeoutMs: 5000,
    counterKeys: ['a'],
    nextKey: () => 'retried-send',
  });
  assert.equal(c.type, 'ok');
  const invokes = history.ops.filter((o) => o.type === 'invoke');
  assert.equal(invokes.length, 2);
  assert.deepEqual(
    invokes.map((o) => [o.kind, o.request?.idempotencyKey, o.request?.path]),
    [
      ['send', 'retried-send', invokes[0]!.request?.path],
      ['send', 'retried-send', invokes[0]!.request?.path],
    ],
  );
  const ends = history.ops.filter((o) => o.type !== 'invoke');
  assert.equal(new Set(ends.map((o) => o.invocationId)).size, 1, 'one invocation for both');
});
