import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WaiterTable, type Waiter } from '../../src/services/processor/waiter-table.js';

let nextId = 1;
function waiter(
  requestId: string,
  invocationId: string,
  replies: string[],
  wants: Waiter<string>['wants'] = 'output',
): Waiter<string> {
  const id = nextId++;
  return {
    id,
    requestId,
    invocationId,
    wants,
    kind: 'submit',
    done: false,
    proposalSeq: undefined,
    reply: (r) => replies.push(`${id}:${r}`),
  };
}

test('a waiter is found by its proposal once, and removing it empties every index', () => {
  const t = new WaiterTable<string>();
  const a = waiter('r1', 'i1', []);
  assert.equal(t.add(a), undefined);
  t.awaitProposal(7, a);
  assert.deepEqual(t.indexSizes(), { all: 1, byRequest: 1, byProposal: 1, byOutput: 0 });
  assert.equal(t.takeProposal(7), a);
  assert.equal(t.takeProposal(7), undefined);
  assert.equal(a.proposalSeq, undefined);
  t.awaitOutput(a);
  assert.deepEqual(t.indexSizes(), { all: 1, byRequest: 1, byProposal: 0, byOutput: 1 });
  assert.equal(t.remove(a), true);
  assert.equal(t.remove(a), false, 'a waiter is removed (answered) once');
  assert.equal(a.done, true);
  assert.deepEqual(t.indexSizes(), { all: 0, byRequest: 0, byProposal: 0, byOutput: 0 });
  assert.equal(t.takeOutput('i1'), undefined);
});

test('removing a waiter that waits on a proposal frees that proposal only', () => {
  const t = new WaiterTable<string>();
  const a = waiter('r1', 'i1', []);
  const b = waiter('r2', 'i2', []);
  t.add(a);
  t.add(b);
  t.awaitProposal(1, a);
  t.awaitProposal(2, b);
  t.remove(a);
  assert.equal(t.takeProposal(1), undefined);
  assert.equal(t.takeProposal(2), b);
  assert.deepEqual(
    t.waiting().map((w) => w.id),
    [b.id],
  );
});

test('a resend of a waiting request is told of the one it supersedes and takes its slots', () => {
  const t = new WaiterTable<string>();
  const first = waiter('r1', 'i1', []);
  t.add(first);
  t.awaitProposal(3, first);
  t.awaitOutput(first);
  const resend = waiter('r1', 'i1', []);
  assert.equal(t.add(resend), first);
  t.takeOver(first, resend);
  t.remove(first);
  assert.equal(resend.proposalSeq, 3);
  assert.equal(t.takeProposal(3), resend);
  assert.deepEqual([...(t.takeOutput('i1') ?? [])], [resend]);
  // The request index now names the resend: a third send supersedes it, not the first.
  const third = waiter('r1', 'i1', []);
  assert.equal(t.add(third), resend);
});

test('a request id seen before whose waiter was answered supersedes nothing; empty ids never', () => {
  const t = new WaiterTable<string>();
  const a = waiter('r1', 'i1', []);
  t.add(a);
  t.remove(a);
  assert.equal(t.add(waiter('r1', 'i1', [])), undefined);
  t.add(waiter('', 'i2', []));
  assert.equal(t.add(waiter('', 'i2', [])), undefined);
  assert.equal(t.size, 3);
  assert.equal(t.indexSizes().byRequest, 1);
});

test('dropProposal forgets a proposal only for the waiter that still holds it', () => {
  const t = new WaiterTable<string>();
  const first = waiter('r1', 'i1', []);
  const resend = waiter('r1', 'i1', []);
  t.add(first);
  t.awaitProposal(5, first);
  t.add(resend);
  t.takeOver(first, resend);
  t.dropProposal(5, first);
  assert.equal(t.takeProposal(5), resend);
});

test('output waiters of one invocation come out together, in order; a done waiter is not added', () => {
  const t = new WaiterTable<string>();
  const ws = [waiter('a', 'i1', []), waiter('b', 'i1', []), waiter('c', 'i2', [])];
  for (const w of ws) {
    t.add(w);
    t.awaitOutput(w);
  }
  const late = waiter('d', 'i1', []);
  t.add(late);
  t.remove(late);
  t.awaitOutput(late);
  assert.deepEqual(
    [...(t.takeOutput('i1') ?? [])].map((w) => w.requestId),
    ['a', 'b'],
  );
  assert.equal(t.takeOutput('i1'), undefined);
  assert.deepEqual(
    [...(t.takeOutput('i2') ?? [])].map((w) => w.requestId),
    ['c'],
  );
});

test('answering every one of many waiters (a step-down) leaves no index behind', () => {
  const t = new WaiterTable<string>();
  const replies: string[] = [];
  const n = 20_000;
  for (let i = 0; i < n; i++) {
    const w = waiter(`r${i}`, `i${i % 100}`, replies);
    t.add(w);
    if (i % 2 === 0) t.awaitProposal(i, w);
    else t.awaitOutput(w);
  }
  const started = performance.now();
  for (const w of t.waiting()) if (t.remove(w)) w.reply('LOST_LEADERSHIP');
  const ms = performance.now() - started;
  assert.equal(replies.length, n);
  assert.deepEqual(t.indexSizes(), { all: 0, byRequest: 0, byProposal: 0, byOutput: 0 });
  // A scan of the proposals per waiter would take ~10^8 steps here (seconds); indexed, ms.
  assert.ok(ms < 1000, `removing ${n} waiters took ${ms.toFixed(0)} ms`);
});
