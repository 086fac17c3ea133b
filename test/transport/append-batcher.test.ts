// The log client's batcher times its appends with one timer, armed for the earliest deadline
// of the appends not yet answered: each append still ends DEADLINE_EXCEEDED at its own
// deadline (a later append with an earlier deadline too), the timer is one whatever the
// number of appends waiting, and none is left once every append is answered (it would hold a
// process that is done). Against a `send` that answers only when told to (the server side is
// test/services-log/append-batch.test.ts's).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { AppendBatcher, type BatchCall } from '../../src/transport/append-batcher.js';
import type * as w from '../../src/protocol/wire.js';

/** A batcher whose batches wait until `answerAll` (each item gets LSN = its index + 1) or their cancel. */
function batcherWithHeldAnswers(): {
  batcher: AppendBatcher;
  answerAll: () => void;
  cancelled: () => number;
} {
  const held: { req: w.AppendBatchRequest; resolve(res: w.AppendBatchResponse): void }[] = [];
  let cancelled = 0;
  const batcher = new AppendBatcher({
    send: (req): BatchCall => {
      let reject!: (err: Error) => void;
      const done = new Promise<w.AppendBatchResponse>((resolve, rej) => {
        reject = rej;
        held.push({ req, resolve });
      });
      return {
        done,
        cancel: () => {
          cancelled++;
          reject(Object.assign(new Error('cancelled'), { code: status.CANCELLED, details: 'cancelled' }));
        },
      };
    },
  });
  return {
    batcher,
    answerAll: () => {
      for (const h of held.splice(0))
        h.resolve({
          results: h.req.items.map((_, i) => ({ firstLsn: i + 1, lastLsn: i + 1, code: 0, message: '' })),
        });
    },
    cancelled: () => cancelled,
  };
}

const timeouts = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const record = { partition: 0, records: [Buffer.from('r')] };
const codeOf = (p: Promise<unknown>): Promise<number> =>
  p.then(
    () => 0,
    (err: { code: number }) => err.code,
  );

test('one timer for many waiting appends, none once they are answered', async () => {
  const { batcher, answerAll } = batcherWithHeldAnswers();
  const before = timeouts();
  const appends = Array.from({ length: 200 }, (_, i) => batcher.append(record, { timeoutMs: 60_000 + i }));
  await new Promise((r) => setImmediate(r)); // the batches leave
  assert.equal(timeouts(), before + 1, 'one timer for 200 waiting appends');
  answerAll();
  const results = await Promise.all(appends);
  assert.equal(results.length, 200);
  assert.equal(timeouts(), before, 'no timer left once every append is answered');
});

test('each append ends at its own deadline, an earlier one made later too; the batch is cancelled once all have', async () => {
  const { batcher, cancelled } = batcherWithHeldAnswers();
  const t0 = performance.now();
  const ended = (p: Promise<unknown>): Promise<{ code: number; ms: number }> =>
    codeOf(p).then((code) => ({ code, ms: performance.now() - t0 }));
  const long = ended(batcher.append(record, { timeoutMs: 900 }));
  const short = ended(batcher.append(record, { timeoutMs: 150 }));
  const [s, l] = await Promise.all([short, long]);
  assert.equal(s.code, status.DEADLINE_EXCEEDED);
  assert.equal(l.code, status.DEADLINE_EXCEEDED);
  assert.ok(s.ms >= 140 && s.ms < 700, `the 150 ms append ended after ${s.ms.toFixed(0)} ms`);
  assert.ok(l.ms >= 880 && l.ms < 2500, `the 900 ms append ended after ${l.ms.toFixed(0)} ms`);
  await new Promise((r) => setImmediate(r));
  assert.equal(cancelled(), 1, 'the batch on the wire is cancelled once none of its appends waits');
});

test('a wall clock set back does not hold an append past its deadline', async (t) => {
  // The wall clock as the process sees it, set back an hour (an NTP step, a VM resumed) while
  // the append waits.
  const realNow = Date.now;
  let offset = 0;
  Date.now = () => realNow() + offset;
  t.after(() => (Date.now = realNow));
  const { batcher, answerAll } = batcherWithHeldAnswers();
  const t0 = performance.now();
  const ended = codeOf(batcher.append(record, { timeoutMs: 150 })).then((code) => ({
    code,
    ms: performance.now() - t0,
  }));
  offset = -3_600_000;
  const bound = new Promise<'held'>((r) => setTimeout(() => r('held'), 3000).unref());
  const r = await Promise.race([ended, bound]);
  if (r === 'held') answerAll(); // (answered, it leaves no timer to hold this process)
  assert.notEqual(r, 'held', 'the append was still waiting 3 s after its 150 ms deadline');
  if (r === 'held') return;
  assert.equal(r.code, status.DEADLINE_EXCEEDED);
  assert.ok(r.ms >= 140 && r.ms < 1500, `the 150 ms append ended after ${r.ms.toFixed(0)} ms`);
});
