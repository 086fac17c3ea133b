// End to end: bug switches that answer clients wrongly, each on the standard suite that must
// catch it at a fixed seed: the largest group among the ops the catching check named must stop
// where the wrong answer came from (service and span) and name the fault that set it off
// (docs/traces-and-report.md#the-catalogue-diagnosed has the table and how often each seed
// reproduces). The switches are split over three files so that each stays within a test
// file's time bound: diagnose-catalogue-{hangs,answers,signals}-e2e.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chaosSuite, namesFault, run, runUntilDiagnosed, topGroup } from './diagnose-e2e-helpers.js';

test('fenced-ack (leader-transfer): sends a new leader acknowledged are not found at its get_output, the leadership change named', async () => {
  // Each transfer makes a new leader whose first proposals the bug drops as duplicates and
  // acknowledges; a transfer with no kill moves leadership on any machine, where a leader kill
  // on a loaded one left calls hanging instead of losing a send. Seeds 1-2 until a send is lost.
  const ran = await runUntilDiagnosed(
    'reference+bug:fenced-ack',
    await chaosSuite('leader-transfer.ts'),
    [1, 2],
    'acknowledgedEffectsPresent',
  );
  const top = topGroup(ran, 'acknowledgedEffectsPresent');
  // What is lost is an acknowledged send: its attach found nothing.
  assert.ok((top.kinds['send'] ?? 0) > 0, JSON.stringify(top.kinds));
  if (top.span === 'processor get_output') {
    // The new leader's own "notFound" reply.
    assert.match(top.service, /^processor-\d+$/);
    assert.equal(top.endedWith, 'a "notFound" reply', top.sentence);
  } else {
    // While leadership still moved, the answer is traced to the ingress's get_output attempt
    // that failed before the one the new leader answered, which is where they got furthest.
    assert.match(top.service, /^ingress-\d+$/);
    assert.equal(top.span, 'ingress get_output attempt', top.sentence);
    assert.match(top.lastHop?.service ?? '', /^processor-\d+$/, top.sentence);
    assert.equal(top.lastHop?.span, 'processor get_output', top.sentence);
  }
  // The leadership change that set it off: the partition's leadership shows a successor (an epoch
  // after the first), or the leader changing while the group's ops ran.
  assert.ok(
    top.leadership.length > 1 || top.leadership.some((s) => s.leaders.length === 1 && (s.epoch ?? 0) >= 2),
    `a leadership change in ${top.sentence}`,
  );
  // The faults named are those of the suite that move leadership: a transfer, or a processor's
  // slowed log link (its lease runs out, and leadership moves with no transfer: sends were lost
  // so on partition 1, which no transfer aims at), else none, when leadership moved on its own
  // on a loaded machine.
  if (top.faults.length > 0)
    namesFault(top, /^(transfer-leadership@processor-\d+|latency@processor-\d+->log)$/);
  else assert.match(top.sentence, /; no fault was in/);
});

test('stale-follower-not-found (lagging-successor): the 404 is traced to a lagging follower\'s "notFound" reply', async () => {
  const ran = await runUntilDiagnosed(
    'reference+bug:stale-follower-not-found',
    await chaosSuite('lagging-successor.ts'),
    [7, 1],
    'noImpossibleErrors',
  );
  const top = topGroup(ran, 'noImpossibleErrors');
  assert.match(top.service, /^processor-\d+$/);
  assert.equal(top.span, 'processor get_output');
  assert.equal(top.endedWith, 'a "notFound" reply');
  namesFault(top, /^(follower-lag|transfer-leadership)@/);
});

test('idempotency-key-ignored (ingress-processor-reset): retries answered differently, the reset named when they met it', async () => {
  const ran = await run(
    'reference+bug:idempotency-key-ignored',
    await chaosSuite('ingress-processor-reset.ts'),
    2,
  );
  const top = topGroup(ran, 'idempotentRetriesAgree');
  assert.equal(top.problem, 'wrong answer');
  // Answered, so no stop: the span they spent longest in, on the request path.
  assert.match(top.service, /^(ingress|processor)-\d+$/);
  // The bug needs no fault (every retry with a key gets a fresh invocation): the group names the
  // resets when its ops overlapped them, and otherwise says no fault was in.
  if (top.faults.some((f) => f.before !== true)) namesFault(top, /^reset_peer@ingress->processor-\d+$/);
  else assert.match(top.sentence, /; (no fault was in|after reset_peer@ingress->processor-\d+ )/);
});
