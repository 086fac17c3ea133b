// Slow readers on a real reference cluster: when does the ingress's answer wait for its client?
// The ingress counts an answer whose bytes the connection's socket did not take at once
// (limbo_ingress_response_write_waits_total) and holds it on a gauge until the client has read
// it (limbo_ingress_responses_waiting_for_client).
//
// An answer of this cluster is bounded (a payload is at most 256 KiB) and loopback's socket
// buffers take a few MB: the workload's slow readers, one answer a connection, never make the
// ingress wait, and the counter stays 0 for them. What makes it wait is more unread answer than
// the buffers hold on one connection: a client that pipelines large echoes and does not read.
// The same client reading at once leaves the counter at 0, so the counter moves only for the
// client that does not read.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { TestCluster } from '../helpers/cluster.js';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import { createHistoryRecorder } from '../../src/workload/history.js';
import { startWorkload } from '../../src/workload/workload.js';
import {
  INGRESS_CLIENT_GONE_TOTAL,
  INGRESS_RESPONSE_WRITE_WAITS_TOTAL as WAITS,
  INGRESS_RESPONSES_WAITING_FOR_CLIENT as WAITING,
} from '../../src/services/ingress/metrics.js';

let cluster: TestCluster;
before(async () => {
  cluster = await TestCluster.start({ processors: 2, partitions: 2 });
  await cluster.waitForLeaders();
});
after(() => cluster?.stop());

/** Echo answers pipelined on one connection: 32 of about 200 KB, 6.4 MB in all. */
const PIPELINED = 32;
const PAD = 'x'.repeat(200_000);

/**
 * Sends PIPELINED echo calls on one connection at once and reads nothing until `whilePaused`
 * resolves; then reads every answer (`then: 'read'`) or closes the connection unread
 * (`'close'`). Resolves with what `whilePaused` returned and the status lines read.
 */
async function pipelinedEchoes<T>(
  whilePaused: () => Promise<T>,
  then: 'read' | 'close' = 'read',
): Promise<{ seen: T; statuses: string[] }> {
  const { hostname, port } = new URL(cluster.url);
  const socket = net.connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.pause();
  const body = JSON.stringify({ pad: PAD });
  const request =
    `POST /Echo/echo HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  for (let i = 0; i < PIPELINED; i++) socket.write(request);
  const statuses: string[] = [];
  let tail = '';
  const allRead = new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      // Status lines never occur inside an answer's body (x's): scan with a tail across chunks.
      const text = tail + chunk.toString('latin1');
      for (const m of text.matchAll(/HTTP\/1\.1 (\d{3})/g)) statuses.push(m[1]!);
      tail = text.slice(-16).replace(/.*HTTP\/1\.1 \d{3}/s, '');
      if (statuses.length >= PIPELINED) resolve();
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`connection closed after ${statuses.length} answers`)));
  });
  allRead.catch(() => {}); // awaited below only when reading; a close is then the test's own
  let seen: T;
  try {
    seen = await whilePaused();
    if (then === 'read') {
      socket.resume();
      await Promise.race([
        allRead,
        delay(30_000).then(() => Promise.reject(new Error('answers not read in 30 s'))),
      ]);
    }
  } finally {
    socket.destroy();
  }
  return { seen, statuses };
}

/** Reads nothing until a write waited (bounded 30 s): how soon depends on how fast the cluster answers. */
async function untilAWriteWaited(
  before: number,
): Promise<{ waits: number; waiting: number; afterMs: number }> {
  const started = performance.now();
  let waits = 0;
  for (; waits === 0 && performance.now() - started < 30_000; await delay(100))
    waits = (await cluster.ingressMetric(WAITS)) - before;
  return {
    waits,
    waiting: await cluster.ingressMetric(WAITING),
    afterMs: Math.round(performance.now() - started),
  };
}

async function gaugeBackToZero(): Promise<number> {
  let v = await cluster.ingressMetric(WAITING);
  for (let waited = 0; v !== 0 && waited < 5000; waited += 100) {
    await delay(100);
    v = await cluster.ingressMetric(WAITING);
  }
  return v;
}

test('slow readers of single answers never make the ingress wait: the answers fit the socket buffers', async () => {
  const history = createHistoryRecorder(createClock());
  const wl = startWorkload({
    baseUrls: [cluster.url],
    random: createRandom(7),
    history,
    concurrency: 4,
    mix: { call: 0.7, send: 0.3 },
    slowReaders: { fraction: 1, pauseMs: 300 },
  });
  try {
    await delay(2000);
    await wl.stop(10_000);
  } finally {
    await wl.stop(0);
  }
  const ok = history.ops.filter((o) => o.type === 'ok').length;
  assert.ok(ok >= 5, `ops answered: ${ok}`);
  assert.equal(await cluster.ingressMetric(WAITS), 0, 'no write waited for a slow reader of a small answer');
  assert.equal(await cluster.ingressMetric(WAITING), 0);
});

test('pipelined answers read at once: no write waits', async () => {
  const before = await cluster.ingressMetric(WAITS);
  const { statuses } = await pipelinedEchoes(() => Promise.resolve(undefined));
  assert.deepEqual(new Set(statuses), new Set(['200']), `answers: ${statuses.join(',')}`);
  assert.equal(statuses.length, PIPELINED);
  assert.equal(
    (await cluster.ingressMetric(WAITS)) - before,
    0,
    'a client that reads at once never holds a write',
  );
  assert.equal(await gaugeBackToZero(), 0);
});

test('pipelined answers not read: the ingress writes wait for the client, then drain', async (t) => {
  const before = await cluster.ingressMetric(WAITS);
  const { seen, statuses } = await pipelinedEchoes(() => untilAWriteWaited(before));
  t.diagnostic(
    `not reading: a write waited after ${seen.afterMs} ms; ${seen.waits} writes waited, ${seen.waiting} answers waiting`,
  );
  assert.ok(seen.waits >= 1, `writes that waited while the client did not read: ${seen.waits}`);
  assert.ok(seen.waiting >= 1, `answers waiting for the client while it did not read: ${seen.waiting}`);
  assert.equal(statuses.length, PIPELINED);
  assert.deepEqual(new Set(statuses), new Set(['200']), `answers: ${statuses.join(',')}`);
  assert.equal(await gaugeBackToZero(), 0, 'every waiting answer was taken once the client read');
});

test('a client that closes with answers waiting: counted gone at stage answering, the gauge drains', async () => {
  const before = await cluster.ingressMetric(WAITS);
  const goneBefore = await cluster.ingressMetric(INGRESS_CLIENT_GONE_TOTAL, { stage: 'answering' });
  const { seen } = await pipelinedEchoes(() => untilAWriteWaited(before), 'close');
  assert.ok(seen.waits >= 1, `writes that waited while the client did not read: ${seen.waits}`);
  assert.equal(await gaugeBackToZero(), 0, 'the waiting answers were let go with their connection');
  const gone = (await cluster.ingressMetric(INGRESS_CLIENT_GONE_TOTAL, { stage: 'answering' })) - goneBefore;
  assert.ok(gone >= 1, `clients gone while their answer waited: ${gone}`);
});
