import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionStateMachine } from '../../src/services/processor/state-machine.js';
import type { LogRecord } from '../../src/protocol/records.js';

const invoke = (id: string, epoch?: number, seq?: number): LogRecord => ({
  type: 'invoke',
  ...(epoch !== undefined ? { proposal: { epoch, seq: seq ?? 1 } } : {}),
  invocationId: id,
  service: 'Counter',
  key: 'a',
  handler: 'add',
  payload: '{"delta":1}',
  createdAtMs: 0,
});
const end = (id: string, epoch: number, seq: number, value: string): LogRecord => ({
  type: 'end',
  proposal: { epoch, seq },
  invocationId: id,
  success: true,
  value,
  failure: '',
  stateUpdates: [{ key: 'Counter/a', value }],
});

function applyAll(records: LogRecord[]): { sm: PartitionStateMachine; effects: string[] } {
  const sm = new PartitionStateMachine();
  const effects = records.map((r, i) => {
    const e = sm.apply(i + 1, r);
    return e.kind === 'dropped'
      ? `dropped:${e.reason}`
      : e.kind === 'invoked'
        ? `invoked:${e.isNew}`
        : e.kind;
  });
  return { sm, effects };
}

test('same records give the same state on every replica', () => {
  const records: LogRecord[] = [
    { type: 'announce_leader', node: 'p1', epoch: 1 },
    invoke('i1', 1, 1),
    invoke('i2', 1, 2),
    end('i1', 1, 3, '1'),
  ];
  const a = applyAll(records);
  const b = applyAll(records);
  assert.deepEqual(a.effects, b.effects);
  assert.deepEqual(a.effects, ['announce', 'invoked:true', 'invoked:true', 'ended']);
  assert.equal(a.sm.getState('Counter/a'), '1');
  assert.deepEqual(
    a.sm.running().map((i) => i.invocationId),
    ['i2'],
  );
  assert.deepEqual(a.sm.counts(), { invoked: 1, completed: 1 });
});

test('a deposed leader cannot write: older epochs and duplicates are dropped', () => {
  const { sm, effects } = applyAll([
    { type: 'announce_leader', node: 'p1', epoch: 1 },
    invoke('i1', 1, 1),
    { type: 'announce_leader', node: 'p2', epoch: 2 },
    end('i1', 1, 2, '1'), // proposed by p1 after it lost leadership
    invoke('i3', 1, 3),
    end('i1', 2, 1, '1'),
    end('i1', 2, 1, '1'), // duplicate (epoch, seq)
    end('i1', 2, 2, '5'), // a second End of the same invocation: effect applied once
    { type: 'announce_leader', node: 'p1', epoch: 1 }, // stale announce
  ]);
  assert.deepEqual(effects, [
    'announce',
    'invoked:true',
    'announce',
    'dropped:stale_epoch',
    'dropped:stale_epoch',
    'ended',
    'dropped:duplicate',
    'dropped:already_ended',
    'dropped:stale_epoch',
  ]);
  assert.equal(sm.getState('Counter/a'), '1');
  assert.equal(sm.get('i3'), undefined);
  assert.equal(sm.leaderNode, 'p2');
  assert.equal(sm.leaderEpoch, 2);
});

test('legacy invokes (appended by the ingress) are not fenced and resends do not duplicate', () => {
  const { sm, effects } = applyAll([
    invoke('i1'),
    invoke('i1'),
    { type: 'announce_leader', node: 'p1', epoch: 1 },
    invoke('i2'),
  ]);
  assert.deepEqual(effects, ['invoked:true', 'invoked:false', 'announce', 'invoked:true']);
  assert.equal(sm.running().length, 2);
});

test('expiry forgets the output, never the fact that the invocation completed', () => {
  const { sm } = applyAll([
    { type: 'announce_leader', node: 'p1', epoch: 1 },
    invoke('i1', 1, 1),
    end('i1', 1, 2, '1'),
  ]);
  sm.forgetOutput('i1');
  assert.equal(sm.get('i1')?.expired, true);
  assert.equal(sm.get('i1')?.output, undefined);
  const again = sm.apply(4, invoke('i1', 1, 3));
  assert.equal(again.kind === 'invoked' && again.isNew, false);
});

test('a completed invocation keeps its output, not its input; a running one keeps its input', () => {
  const { sm } = applyAll([
    { type: 'announce_leader', node: 'p1', epoch: 1 },
    invoke('i1', 1, 1),
    invoke('i2', 1, 2),
    end('i1', 1, 3, '1'),
  ]);
  assert.equal(sm.get('i1')?.payload, '');
  assert.equal(sm.get('i1')?.output?.value, '1');
  assert.equal(sm.get('i2')?.payload, '{"delta":1}');
  assert.deepEqual(
    sm.running().map((i) => [i.invocationId, i.payload]),
    [['i2', '{"delta":1}']],
  );
  // A resubmit of the finished invocation is still known (and not run again).
  const again = sm.apply(5, invoke('i1', 1, 4));
  assert.equal(again.kind === 'invoked' && again.isNew, false);
});

test('counts follow every record, dropped ones and redeliveries included', () => {
  // The counts are kept as records apply (never a scan); compare them with the invocations
  // themselves after a log that mixes new, duplicate, fenced and repeated records.
  const records: LogRecord[] = [{ type: 'announce_leader', node: 'p1', epoch: 1 }];
  let seq = 0;
  for (let i = 0; i < 60; i++) {
    records.push(invoke(`i${i}`, 1, ++seq));
    if (i % 3 === 0) records.push(invoke(`i${i}`, 1, ++seq)); // a resend of the same invocation
    if (i % 2 === 0) records.push(end(`i${i}`, 1, ++seq, String(i)));
    if (i % 4 === 0) records.push(end(`i${i}`, 1, ++seq, 'again')); // already ended
    if (i % 5 === 0) records.push(end(`i${i + 1}`, 0, ++seq, 'stale')); // older epoch: dropped
  }
  records.push({ type: 'announce_leader', node: 'p2', epoch: 2 });
  seq = 0;
  for (let i = 1; i < 60; i += 4) records.push(end(`i${i}`, 2, ++seq, 'by p2'));
  records.push(end('unknown', 2, seq + 1, 'x'));
  const { sm } = applyAll(records);
  const ids = Array.from({ length: 60 }, (_, i) => sm.get(`i${i}`));
  const invoked = ids.filter((s) => s?.status === 'invoked').length;
  const completed = ids.filter((s) => s?.status === 'completed').length;
  assert.deepEqual(sm.counts(), { invoked, completed });
  assert.deepEqual(sm.counts(), { invoked: 15, completed: 45 });
  assert.equal(sm.running().length, 15);
});

test('running() is every invoked and not ended invocation, in log order, whatever ended around it', () => {
  // Ends land out of invoke order, resends and fenced records mix in, expiries forget outputs:
  // running() must equal the scan of every invocation it replaces.
  const records: LogRecord[] = [{ type: 'announce_leader', node: 'p1', epoch: 1 }];
  let seq = 0;
  let state = 7;
  const next = (n: number): number => ((state = (state * 1103515245 + 12345) >>> 0), state % n);
  const open: string[] = [];
  for (let i = 0; i < 400; i++) {
    records.push(invoke(`i${i}`, 1, ++seq));
    open.push(`i${i}`);
    if (next(4) === 0) records.push(invoke(`i${next(i + 1)}`, 1, ++seq)); // a resend, maybe of an ended one
    if (next(3) !== 0 && open.length > 0) {
      const [id] = open.splice(next(open.length), 1);
      records.push(end(id!, 1, ++seq, String(i)));
    }
    if (next(10) === 0) records.push(end(`i${i}`, 0, ++seq, 'stale')); // fenced: dropped
  }
  const { sm } = applyAll(records);
  for (let i = 0; i < 400; i += 7) sm.forgetOutput(`i${i}`);
  const all = Array.from({ length: 400 }, (_, i) => sm.get(`i${i}`)!);
  const scanned = all
    .filter((inv) => inv.status === 'invoked')
    .sort((a, b) => a.invokedAtLsn - b.invokedAtLsn)
    .map((inv) => inv.invocationId);
  assert.ok(scanned.length > 50 && scanned.length < 350, `${scanned.length} still running`);
  assert.deepEqual(
    sm.running().map((inv) => inv.invocationId),
    scanned,
  );
  // An expired output is gone, its invocation still known as completed.
  const expired = all.filter((inv) => inv.expired);
  assert.ok(expired.length > 0);
  for (const inv of expired) {
    assert.equal(inv.status, 'completed');
    assert.equal(inv.output, undefined);
  }
});
