// The ingress's calls to a processor travel over one Processor.Calls stream (call-stream.ts),
// against a real log server and `limbo serve processor`: many calls share one stream and the
// unary RPCs answer the same invocations; a call past its deadline or aborted fails at once
// and the processor frees its reply slot; a processor killed with calls waiting fails them
// UNAVAILABLE at once and the same client calls again over a new stream after a restart; a
// processor stopped gracefully answers its waiting calls and exits at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createProcessorClient, grpc, type ProcessorClient } from '../../src/transport/grpc.js';
import { makeInvocationId, partitionKeyOfInvocation, partitionOf } from '../../src/protocol/ids.js';
import type { SubmitRequest } from '../../src/protocol/wire.js';
import { startLimboService } from '../../src/runtime/process.js';
import { scrape, sumSamples } from '../../src/telemetry/prom-text.js';
import { TestCluster } from '../helpers/cluster.js';

const PARTITIONS = 2;
const codeOf = (err: unknown): number | undefined => (err as grpc.ServiceError).code;

function call(service: string, handler: string, input: unknown): SubmitRequest {
  const invocationId = makeInvocationId({ service, key: '', handler }, undefined);
  return {
    requestId: `req-${invocationId}`,
    invocationId,
    partition: partitionOf(partitionKeyOfInvocation(invocationId) ?? 0, PARTITIONS),
    service,
    key: '',
    handler,
    payload: Buffer.from(JSON.stringify(input)),
    idempotencyKey: '',
    replyOn: 'OUTPUT',
    traceparent: '',
  };
}

async function oneLeader(t: { after(fn: () => unknown): void }): Promise<TestCluster> {
  const cluster = await TestCluster.start({ processors: 1, partitions: PARTITIONS });
  t.after(() => cluster.stop());
  await cluster.waitForLeaders();
  return cluster;
}

function client(t: { after(fn: () => unknown): void }, address: string): ProcessorClient {
  const c = createProcessorClient(address);
  t.after(() => c.close());
  return c;
}

const outputOf = (r: { result: string; output?: { value: Buffer } }): unknown =>
  r.result === 'output' ? JSON.parse(r.output!.value.toString('utf8')) : r.result;

test('calls share one stream; the unary RPCs answer the same invocations', async (t) => {
  const cluster = await oneLeader(t);
  const c = client(t, cluster.processors[0]!.ready.addresses.grpc as string);
  const reqs = Array.from({ length: 100 }, (_, i) => call('Echo', 'echo', { i }));
  const answers = await Promise.all(reqs.map((r) => c.submit(r, { timeoutMs: 10_000 })));
  assert.deepEqual(
    answers.map(outputOf),
    reqs.map((_, i) => ({ i })),
  );
  assert.deepEqual(c.callStats, { streams: 1, open: 0 });
  // The per-record gauges are read when scraped (metrics.ts ReplicaReadings): every call's
  // invoke and end applied, every invocation completed, nothing waiting.
  const samples = await scrape(cluster.processors[0]!.ready.addresses.metrics as string);
  // Each partition's log holds its calls' records after at least one AnnounceLeader.
  assert.ok(sumSamples(samples, 'limbo_processor_applied_lsn') >= 2 * reqs.length + PARTITIONS);
  assert.equal(sumSamples(samples, 'limbo_processor_invocations', { status: 'completed' }), reqs.length);
  assert.equal(sumSamples(samples, 'limbo_processor_invocations', { status: 'invoked' }), 0);
  assert.equal(sumSamples(samples, 'limbo_processor_pending_rpcs'), 0);

  // A unary submit, then its output over the stream; a stream call's output by unary call.
  const unary = call('Echo', 'echo', { unary: true });
  assert.deepEqual(outputOf(await c.unary.submit(unary, { timeoutMs: 10_000 })), { unary: true });
  const byStream = await c.getOutput(
    { requestId: 'g1', invocationId: unary.invocationId, partition: unary.partition, block: false },
    { timeoutMs: 5000 },
  );
  assert.deepEqual(outputOf(byStream), { unary: true });
  const first = reqs[0]!;
  const byUnary = await c.unary.getOutput(
    { requestId: 'g2', invocationId: first.invocationId, partition: first.partition, block: false },
    { timeoutMs: 5000 },
  );
  assert.deepEqual(outputOf(byUnary), { i: 0 });
  // A partition this processor does not host: NOT_LEADER over the stream too.
  const elsewhere = await c.submit({ ...call('Echo', 'echo', {}), partition: 9 }, { timeoutMs: 5000 });
  assert.equal(elsewhere.result, 'error');
  assert.equal(elsewhere.result === 'error' && elsewhere.error.code, 'NOT_LEADER');
  assert.equal(c.callStats.streams, 1);
});

test('a call past its deadline or aborted fails at once, and the processor frees its reply slot', async (t) => {
  const cluster = await oneLeader(t);
  const processor = cluster.processors[0]!;
  const c = client(t, processor.ready.addresses.grpc as string);
  const pending = async (): Promise<number> =>
    sumSamples(await scrape(processor.ready.addresses.metrics as string), 'limbo_processor_pending_rpcs');

  const started = Date.now();
  const outcome = (p: Promise<unknown>): Promise<unknown> => p.then(() => 'answered', codeOf);
  const late = outcome(c.submit(call('Sleep', 'sleep', { ms: 6000 }), { timeoutMs: 300 }));
  const abort = new AbortController();
  const aborted = outcome(
    c.submit(call('Sleep', 'sleep', { ms: 6000 }), { signal: abort.signal, timeoutMs: 20_000 }),
  );
  // The leader holds a reply slot for the aborted one (read when scraped) until it is withdrawn.
  let held = await pending();
  for (let i = 0; i < 40 && held < 1; i++) {
    await new Promise((r) => setTimeout(r, 25));
    held = await pending();
  }
  assert.ok(held >= 1, `no reply slot shown while a call waits (${held})`);
  abort.abort();
  assert.equal(await late, Number(grpc.status.DEADLINE_EXCEEDED));
  assert.equal(await aborted, Number(grpc.status.CANCELLED));
  assert.ok(Date.now() - started < 2000, `gave up after ${Date.now() - started} ms`);
  // The two sleeps still run for seconds; their reply slots were freed by the cancels.
  let left = await pending();
  for (let i = 0; i < 30 && left > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = await pending();
  }
  assert.equal(left, 0, 'reply slots still held after the calls were withdrawn');
  assert.ok(Date.now() - started < 4500, 'freed by the cancels, not by the sleeps ending');
  // An already aborted signal: refused without a message.
  await assert.rejects(c.submit(call('Echo', 'echo', {}), { signal: AbortSignal.abort() }), (e) =>
    Boolean(codeOf(e) === Number(grpc.status.CANCELLED)),
  );
  // The stream goes on.
  assert.deepEqual(outputOf(await c.submit(call('Echo', 'echo', { after: 1 }), { timeoutMs: 5000 })), {
    after: 1,
  });
  assert.deepEqual(c.callStats, { streams: 1, open: 0 });
});

test('a processor killed with calls waiting fails them UNAVAILABLE at once; after a restart the client calls over a new stream', async (t) => {
  const cluster = await oneLeader(t);
  const first = cluster.processors[0]!;
  const address = first.ready.addresses.grpc as string;
  const c = client(t, address);
  assert.equal(outputOf(await c.submit(call('Echo', 'echo', 1), { timeoutMs: 5000 })), 1);
  const waiting = Array.from({ length: 5 }, () =>
    c.submit(call('Sleep', 'sleep', { ms: 8000 }), { timeoutMs: 20_000 }).then(
      () => 'answered',
      (e: unknown) => codeOf(e),
    ),
  );
  await new Promise((r) => setTimeout(r, 300));
  const killedAt = Date.now();
  first.kill('SIGKILL');
  await first.exited;
  const codes = await Promise.all(waiting);
  assert.ok(Date.now() - killedAt < 3000, `failed after ${Date.now() - killedAt} ms`);
  assert.deepEqual(codes, Array(5).fill(Number(grpc.status.UNAVAILABLE)));

  const again = await startLimboService(
    'processor',
    ['--node', 'processor-1', '--log-address', cluster.logAddress, '--port', address.split(':')[1]!],
    { name: 'processor-1' },
  );
  cluster.processors[0] = again;
  await cluster.waitForLeaders();
  let answer: unknown;
  for (let i = 0; i < 50 && answer === undefined; i++) {
    const r = await c.submit(call('Echo', 'echo', 2), { timeoutMs: 5000 }).catch(() => undefined);
    if (r?.result === 'output') answer = outputOf(r);
    else await new Promise((res) => setTimeout(res, 100));
  }
  assert.equal(answer, 2);
  assert.ok(c.callStats.streams >= 2, `${c.callStats.streams} streams`);
});

test('a processor stopped gracefully answers its waiting calls and exits at once', async (t) => {
  const cluster = await oneLeader(t);
  const processor = cluster.processors[0]!;
  const c = client(t, processor.ready.addresses.grpc as string);
  const waiting = Array.from({ length: 5 }, () =>
    c.submit(call('Sleep', 'sleep', { ms: 8000 }), { timeoutMs: 20_000 }),
  );
  await new Promise((r) => setTimeout(r, 300));
  const stoppedAt = Date.now();
  await processor.stop(5000);
  const answers = await Promise.all(waiting);
  assert.ok(Date.now() - stoppedAt < 1500, `answered and exited after ${Date.now() - stoppedAt} ms`);
  assert.equal(processor.lastStop()?.graceful, true);
  assert.deepEqual(
    answers.map((a) => (a.result === 'error' ? a.error.code : a.result)),
    Array(5).fill('LOST_LEADERSHIP'),
  );
});
