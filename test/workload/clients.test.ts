// The workload's clients that give up and its bursts, against a small real HTTP server that
// answers after a delay and notes every request whose client closed the connection first:
// how an abandoned op is recorded (info, outcome unknown, never fail), that a same-key retry is
// the same request again and 'none' sends nothing more, that the checkers read such a history
// right, that a seed replays the same decisions, and when burst ops start.
import { test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import { makeInvocationId } from '../../src/protocol/ids.js';
import { createHistoryRecorder, type HistoryRecorder } from '../../src/workload/history.js';
import { createHttpClient, type HttpClient } from '../../src/workload/http-client.js';
import { callOp, counterAddOp, counterGetOp, sendOp, type OpContext } from '../../src/workload/ops.js';
import { giveUpDraws, type GiveUpSpec } from '../../src/workload/give-up.js';
import { startWorkload, type WorkloadSpec } from '../../src/workload/workload.js';
import {
  errorAnswersBounded,
  exactlyOnce,
  keysFreeAfterHeal,
  noClientLeftHanging,
  noGhostCompletions,
} from '../../src/checkers/index.js';
import type { HistoryOp, RunData } from '../../src/run-data/run-data.js';

interface SeenRequest {
  method: string;
  path: string;
  idempotencyKey?: string;
  /** The client closed the connection before the answer was written. */
  closedEarly: boolean;
}

/** Answers like the reference ingress, `delayMs` after each request arrived (0: at once). */
async function startSlowServer(t: TestContext, delayMs: number) {
  const seen: SeenRequest[] = [];
  const counters = new Map<string, number>();
  const applied = new Set<string>();
  let open = 0;
  let maxOpen = 0;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const key = req.headers['idempotency-key'] as string | undefined;
    const entry: SeenRequest = {
      method: req.method ?? '',
      path,
      ...(key !== undefined ? { idempotencyKey: key } : {}),
      closedEarly: false,
    };
    seen.push(entry);
    open++;
    maxOpen = Math.max(maxOpen, open);
    let answered = false;
    res.on('close', () => {
      open--;
      if (!answered) entry.closedEarly = true;
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body =
        chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString()) as { delta?: number }) : {};
      const attach = /^\/invocations\/([^/]+)\/attach$/.exec(path);
      const isSend = path.endsWith('/send');
      const parts = (isSend ? path.slice(0, -'/send'.length) : path).split('/').slice(1);
      const target =
        attach || parts.length < 2
          ? undefined
          : parts.length === 3
            ? { service: parts[0]!, key: decodeURIComponent(parts[1]!), handler: parts[2]! }
            : { service: parts[0]!, key: '', handler: parts[1]! };
      const id = attach ? decodeURIComponent(attach[1]!) : target ? makeInvocationId(target, key) : 'inv_x';
      // An add takes effect on arrival, once per invocation, whether or not its client waits.
      if (target?.service === 'Counter' && target.handler === 'add' && !applied.has(id)) {
        applied.add(id);
        counters.set(target.key, (counters.get(target.key) ?? 0) + (body.delta ?? 0));
      }
      const status = isSend ? 202 : 200;
      const out =
        target?.service === 'Counter'
          ? (counters.get(target.key) ?? 0)
          : status === 202
            ? { invocationId: id, status: 'Accepted' }
            : { ok: true };
      const answer = (): void => {
        if (res.destroyed) return;
        answered = true;
        res.writeHead(status, { 'content-type': 'application/json', 'x-limbo-invocation-id': id });
        res.end(JSON.stringify(out));
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    counters,
    maxOpen: () => maxOpen,
    /** Waits (bounded) until no request is open: every close the clients caused has been seen. */
    settled: async (): Promise<void> => {
      const deadline = performance.now() + 3000;
      while (open > 0 && performance.now() < deadline) await delay(10);
    },
  };
}

function runDataOf(ops: readonly HistoryOp[]): RunData {
  const end = Math.max(...ops.map((o) => o.timeMs)) + 1;
  return {
    suite: 't',
    target: 'test',
    seed: 1,
    phases: { startedAtWall: '', healedAtMs: 0, deadlineMs: end },
    history: [...ops],
    series: [],
    faults: [],
  };
}

function opContext(
  http: HttpClient,
  history: HistoryRecorder,
  url: string,
  giveUp: GiveUpSpec | undefined,
  seed: number,
): OpContext {
  let n = 0;
  return {
    http,
    history,
    random: createRandom(seed),
    process: 0,
    baseUrl: url,
    opTimeoutMs: 5000,
    counterKeys: ['a', 'b'],
    nextKey: () => `k${seed}-${n++}`,
    ...(giveUp !== undefined ? { giveUp: giveUpDraws(giveUp, createRandom(seed).fork('give-up-0')) } : {}),
  };
}

const completions = (history: HistoryRecorder) => history.ops.filter((o) => o.type !== 'invoke');

test("retry 'same-key': the abandoned attempt is info (outcome unknown), the retry is the same request and gets the answer", async (t) => {
  const server = await startSlowServer(t, 250);
  const client = createHttpClient();
  t.after(() => client.close());
  const history = createHistoryRecorder(createClock());
  const ctx = opContext(
    client,
    history,
    server.url,
    { fraction: 1, afterMs: [30, 60], retry: 'same-key' },
    3,
  );
  const results = [await callOp(ctx), await sendOp(ctx), await counterAddOp(ctx), await counterAddOp(ctx)];
  assert.deepEqual(
    results.map((r) => r.type),
    ['ok', 'ok', 'ok', 'ok'],
  );
  const ends = completions(history);
  assert.equal(ends.length, 8, 'each op: the abandoned attempt and its retry');
  for (let i = 0; i < ends.length; i += 2) {
    const [abandoned, retry] = [ends[i]!, ends[i + 1]!];
    assert.equal(abandoned.type, 'info', 'abandoned: outcome unknown, never fail');
    assert.equal(abandoned.error?.code, 'aborted');
    assert.match(abandoned.error?.message ?? '', /gave up \d+ ms after the op began/);
    assert.equal(abandoned.response, undefined, 'no answer was seen');
    assert.match(abandoned.invocationId ?? '', /^inv_/, 'the invocation id is known all the same');
    assert.equal(retry.type, 'ok');
    assert.equal(retry.kind, abandoned.kind);
    assert.deepEqual(retry.request, abandoned.request, 'the same request, the same idempotency key');
    assert.equal(retry.invocationId, abandoned.invocationId, 'the one invocation');
    const waited =
      retry.timeMs - history.ops.find((o) => o.type === 'invoke' && o.opId === retry.opId)!.timeMs;
    assert.ok(waited >= 240, `the retry itself is never given up (waited ${Math.round(waited)} ms)`);
  }
  // The server saw each abandoned request's client leave before its answer, and no retry's.
  // On a loaded machine a client may give up before its first attempt was even written: then
  // the server sees that op once, the retry, answered.
  await server.settled();
  const sends = server.seen.filter((s) => s.method === 'POST');
  const perOp = new Map<string, boolean[]>();
  for (const s of sends) {
    const req = `${s.path} ${s.idempotencyKey ?? ''}`;
    perOp.set(req, [...(perOp.get(req) ?? []), s.closedEarly]);
  }
  assert.equal(perOp.size, 4, 'four ops, each its own request');
  for (const [req, closed] of perOp)
    assert.ok(
      JSON.stringify(closed) === '[true,false]' || JSON.stringify(closed) === '[false]',
      `${req}: the abandoned attempt left early, the retry was answered (${JSON.stringify(closed)})`,
    );
  // The checkers read this history right: nothing hung, no error answer, each add applied once.
  for (const key of ['a', 'b']) await counterGetOp({ ...ctx, giveUp: undefined }, key, true);
  const run = runDataOf(history.ops);
  for (const check of [noClientLeftHanging(), errorAnswersBounded(), exactlyOnce(), keysFreeAfterHeal()]) {
    const r = check.check(run);
    assert.equal(r.verdict, 'pass', `${check.name}: ${r.summary}`);
  }
});

test("retry 'none': the client walks away — one attempt, info, and no retry even for a counter add", async (t) => {
  const server = await startSlowServer(t, 250);
  const client = createHttpClient();
  t.after(() => client.close());
  const history = createHistoryRecorder(createClock());
  const ctx = opContext(client, history, server.url, { fraction: 1, afterMs: [20, 40], retry: 'none' }, 4);
  const results = [await callOp(ctx), await sendOp(ctx), await counterAddOp(ctx)];
  assert.deepEqual(
    results.map((r) => [r.type, r.error?.code]),
    [
      ['info', 'aborted'],
      ['info', 'aborted'],
      ['info', 'aborted'],
    ],
  );
  assert.equal(completions(history).length, 3, 'nothing sent again');
  assert.equal(server.seen.filter((s) => s.method === 'POST').length, 3);
  await server.settled();
  assert.ok(server.seen.every((s) => s.closedEarly));
  // The add took effect though its client left: exactlyOnce counts it as one unknown effect.
  for (const key of ['a', 'b']) await counterGetOp({ ...ctx, giveUp: undefined }, key, true);
  const run = runDataOf(history.ops);
  for (const check of [noClientLeftHanging(), exactlyOnce()]) {
    const r = check.check(run);
    assert.equal(r.verdict, 'pass', `${check.name}: ${r.summary}`);
  }
  // The server completed what the client walked away from: that is no lost reply (no ghost),
  // where the same op timing out on the client would be one.
  const completed = Object.fromEntries(
    completions(history)
      .filter((o) => o.invocationId !== undefined)
      .map((o) => [o.invocationId!, { status: 'completed', source: 'test' }]),
  );
  // (a run with spans, none of them an End: the server's word comes from serverInvocations)
  const traced: RunData = {
    ...run,
    serverInvocations: completed,
    spans: [
      {
        traceId: 'f'.repeat(32),
        spanId: 'f'.repeat(16),
        parentSpanId: '',
        name: 'client call',
        service: 'client',
        kind: 3,
        startMs: 0,
        endMs: 1,
        attributes: {},
        status: { code: 0, message: '' },
      },
    ],
  };
  const ghosts = noGhostCompletions().check(traced);
  assert.equal(ghosts.verdict, 'pass', ghosts.summary);
  const timedOut = run.history.map((o) =>
    o.error?.code === 'aborted'
      ? { ...o, error: { code: 'client_timeout' as const, message: 'timeout' } }
      : o,
  );
  assert.equal(noGhostCompletions().check({ ...traced, history: timedOut }).verdict, 'fail');
});

test('a send given up after its 202 is info with the invocation id, and its retry sends and attaches again', async (t) => {
  const server = await startSlowServer(t, 0);
  const client = createHttpClient();
  t.after(() => client.close());
  const history = createHistoryRecorder(createClock());
  // The send is answered at once; the attach waits 300 ms, past the give-up.
  const base = opContext(
    client,
    history,
    server.url,
    { fraction: 1, afterMs: [50, 50], retry: 'same-key' },
    5,
  );
  const c = await sendOp({ ...base, attachAfterMs: 300 });
  assert.equal(c.type, 'ok');
  const [abandoned, retry] = completions(history);
  assert.deepEqual([abandoned!.type, abandoned!.error?.code], ['info', 'aborted']);
  assert.match(abandoned!.invocationId ?? '', /^inv_/);
  assert.equal(retry!.invocationId, abandoned!.invocationId);
  // The first attach was never made (the client gave up while waiting to attach).
  assert.deepEqual(
    server.seen.map((s) => `${s.method} ${s.path.endsWith('/attach') ? 'attach' : 'send'}`),
    ['POST send', 'POST send', 'GET attach'],
  );
});

async function runWorkload(t: TestContext, url: string, spec: WorkloadSpec, seed: number, ops: number) {
  const history = createHistoryRecorder(createClock());
  const wl = startWorkload({
    baseUrls: [url],
    random: createRandom(seed),
    history,
    opTimeoutMs: 5000,
    ...spec,
  });
  t.after(() => wl.stop(0));
  const deadline = performance.now() + 20_000;
  while (history.completed() < ops && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  await wl.stop(5000);
  return { history, wl };
}

test('a seed replays the same give-up decisions, and they do not change the op mix', async (t) => {
  const server = await startSlowServer(t, 120);
  const spec: WorkloadSpec = {
    concurrency: 1,
    mix: { call: 1, send: 1, counterAdd: 1 },
    giveUp: { fraction: 0.4, afterMs: [10, 40], retry: 'same-key' },
  };
  const shape = (ops: readonly HistoryOp[]) =>
    ops
      .filter((o) => o.type !== 'invoke')
      .slice(0, 30)
      .map((o) => `${o.kind} ${o.request?.idempotencyKey} ${o.type} ${o.error?.code ?? ''}`);
  const a = await runWorkload(t, server.url, spec, 21, 30);
  const b = await runWorkload(t, server.url, spec, 21, 30);
  assert.deepEqual(shape(a.history.ops), shape(b.history.ops));
  const abandoned = a.history.ops.filter((o) => o.type === 'info' && o.error?.code === 'aborted').length;
  assert.ok(abandoned >= 5 && abandoned <= 20, `${abandoned} abandoned`);
  // Without give-ups the same seed draws the same ops (one attempt each, no retries).
  const plain = await runWorkload(t, server.url, { ...spec, giveUp: undefined }, 21, 20);
  const firstAttempts = (ops: readonly HistoryOp[]) => {
    const seenKeys = new Set<string>();
    return ops
      .filter(
        (o) =>
          o.type === 'invoke' &&
          !seenKeys.has(o.request!.idempotencyKey!) &&
          seenKeys.add(o.request!.idempotencyKey!),
      )
      .slice(0, 20)
      .map((o) => `${o.kind} ${o.request?.path} ${JSON.stringify(o.request?.body)}`);
  };
  assert.deepEqual(firstAttempts(a.history.ops), firstAttempts(plain.history.ops));
});

test('bursts: ops start at the burst rate inside each burst only, on burst clients of their own', async (t) => {
  const server = await startSlowServer(t, 0);
  const history = createHistoryRecorder(createClock());
  const wl = startWorkload({
    baseUrls: [server.url],
    random: createRandom(9),
    history,
    opTimeoutMs: 5000,
    concurrency: 1,
    thinkMs: 100,
    mix: { call: 1 },
    // Bursts at 200–400 ms and 900–1100 ms: 30 ops each.
    bursts: { everyMs: 700, lengthMs: 200, ratePerSec: 150, firstAtMs: 200 },
  });
  t.after(() => wl.stop(0));
  await delay(1300);
  await wl.stop(5000);
  assert.deepEqual(wl.burstOps(), { started: 60, skipped: 0 });
  const invokes = history.ops.filter((o) => o.type === 'invoke');
  const burst = invokes.filter((o) => o.process !== 0);
  assert.equal(burst.length, 60);
  assert.ok(
    burst.every((o) => o.process >= 1 && o.process <= 8),
    'burst clients numbered after the steady one',
  );
  assert.equal(new Set(burst.map((o) => o.process)).size, 8, 'spread over the burst clients');
  // Timers run late on a busy machine; never early.
  const late = 80;
  const outside = burst.filter(
    (o) => !((o.timeMs >= 200 && o.timeMs <= 400 + late) || (o.timeMs >= 900 && o.timeMs <= 1100 + late)),
  );
  assert.deepEqual(
    outside.map((o) => Math.round(o.timeMs)),
    [],
    'every burst op starts inside a burst',
  );
  const steady = invokes.filter((o) => o.process === 0).length;
  assert.ok(steady >= 5 && steady <= 14, `${steady} steady ops beside the bursts`);
  assert.equal(history.inFlight(), 0);
});

test('bursts: at most maxInFlight burst ops open at once; ops due past it are counted, not started', async (t) => {
  const server = await startSlowServer(t, 300);
  const history = createHistoryRecorder(createClock());
  const wl = startWorkload({
    baseUrls: [server.url],
    random: createRandom(10),
    history,
    opTimeoutMs: 5000,
    concurrency: 1,
    mix: { call: 1 },
    bursts: { everyMs: 5000, lengthMs: 300, ratePerSec: 100, firstAtMs: 0, maxInFlight: 5 },
  });
  t.after(() => wl.stop(0));
  await delay(700);
  await wl.stop(5000);
  const { started, skipped } = wl.burstOps();
  assert.equal(started + skipped, 30, 'every op of the burst was due');
  assert.ok(started >= 5 && started <= 10 && skipped >= 20, `started ${started}, skipped ${skipped}`);
  assert.ok(server.maxOpen() <= 5 + 1, `${server.maxOpen()} requests open at once at most`);
});
