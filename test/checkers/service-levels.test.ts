// serviceLevels: failover, the tail during a fault net of what the fault imposes, and recovery
// after the heal — each shown to fail when its bound is broken and to pass when held.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serviceLevels, type ServiceLevels } from '../../src/checkers/service-levels.js';
import { RunBuilder } from '../helpers/run-data-builder.js';

const slo: ServiceLevels = { failoverMs: 3000, p99DuringFaultMs: 2000, recoveryAfterHealMs: 3000 };

test('failover: an op met by a leader kill that ends past failoverMs breaks it, naming the op', () => {
  const b = new RunBuilder().fault({
    fault: 'kill',
    target: 'processor-1',
    leader: true,
    injectedAtMs: 2000,
    healedAtMs: 9000,
  });
  b.op(1500, 2400, 'ok');
  b.op(1900, 4500, 'ok', 'call', {}, { invocationId: 'inv_ok' });
  assert.equal(serviceLevels(slo).check(b.run).verdict, 'pass');
  b.op(1900, 5600, 'ok', 'call', {}, { invocationId: 'inv_slow' });
  const r = serviceLevels(slo).check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /^failover kill@processor-1: 1 ops over 3000 ms \(worst 3600 ms, inv_slow\)/);
  assert.deepEqual(r.evidence.invocationIds, ['inv_slow']);
});

test('tail: a black hole’s own hold is not counted; slowness beyond it is', () => {
  const b = new RunBuilder().fault({
    fault: 'timeout',
    target: 'ingress->processor-1',
    injectedAtMs: 2000,
    healedAtMs: 7000,
  });
  // 30 ops invoked in the window, all held until the heal and answered 100 ms after it.
  for (let i = 0; i < 30; i++) b.op(2000 + i * 100, 7100, 'ok');
  assert.equal(serviceLevels(slo).check(b.run).verdict, 'pass', 'the hold is the fault’s');
  // The same ops answered 2.5 s after the heal: slow beyond what the fault imposed — and,
  // past recoveryAfterHealMs too? No: 2.5 s is within 3 s. Only the tail bound breaks.
  const slow = new RunBuilder().fault({
    fault: 'timeout',
    target: 'ingress->processor-1',
    injectedAtMs: 2000,
    healedAtMs: 7000,
  });
  for (let i = 0; i < 30; i++) slow.op(2000 + i * 100, 9500, 'ok');
  const r = serviceLevels(slo).check(slow.run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /^tail timeout@ingress->processor-1: 30 ops over 2000 ms \(worst 2500 ms/);
});

test('tail: up to latencyCrossings × a latency fault’s added latency is the fault’s', () => {
  const run = (latencyMs: number) => {
    const b = new RunBuilder().fault({
      fault: 'latency',
      target: 'processor-1->log',
      injectedAtMs: 2000,
      healedAtMs: 7000,
      details: { attributes: { latency: 300, jitter: 100 } },
    });
    for (let i = 0; i < 40; i++) b.op(2000 + i * 50, 2000 + i * 50 + latencyMs, 'ok');
    return serviceLevels(slo).check(b.run);
  };
  assert.equal(run(2000 + 3 * 400).verdict, 'pass', '3 crossings of 400 ms on top of the bound');
  assert.equal(run(2000 + 3 * 400 + 200).verdict, 'fail');
});

test('tail: fewer than 20 ops invoked in a window are not a tail', () => {
  const b = new RunBuilder().fault({
    fault: 'latency',
    target: 'a->b',
    injectedAtMs: 2000,
    healedAtMs: 3000,
  });
  for (let i = 0; i < 10; i++) b.op(2000 + i * 10, 9000, 'ok');
  const r = serviceLevels({ ...slo, recoveryAfterHealMs: 60_000 }).check(b.run);
  assert.equal(r.verdict, 'pass', r.summary);
});

test('recovery: an op live at the heal must end within recoveryAfterHealMs of it, unless another fault is in', () => {
  const b = new RunBuilder().fault({
    fault: 'link-down',
    target: 'a->b',
    injectedAtMs: 2000,
    healedAtMs: 3000,
  });
  b.op(2500, 5500, 'ok');
  assert.equal(serviceLevels(slo).check(b.run).verdict, 'pass');
  b.op(2600, 6500, 'ok', 'call', {}, { invocationId: 'inv_stuck' });
  const r = serviceLevels(slo).check(b.run);
  assert.equal(r.verdict, 'fail');
  assert.match(r.summary, /recovery link-down@a->b: 1 ops over 3000 ms \(worst 3500 ms, inv_stuck\)/);
  // A second fault injected while it waited owns the wait.
  b.fault({ fault: 'link-down', target: 'a->b', injectedAtMs: 4000, healedAtMs: 5000 });
  const r2 = serviceLevels(slo).check(b.run);
  assert.doesNotMatch(r2.summary, /recovery link-down@a->b: 1 ops over 3000 ms \(worst 3500/);
  assert.equal(serviceLevels(slo).check(new RunBuilder().run).verdict, 'inconclusive');
});

test('failover: what a latency fault the op also met added is not the failover’s', () => {
  const run = (endMs: number) => {
    const b = new RunBuilder()
      .fault({
        fault: 'transfer-leadership',
        target: 'processor-1',
        leader: true,
        injectedAtMs: 2000,
        healedAtMs: 3000,
      })
      .fault({
        fault: 'follower-lag',
        target: 'processor-2,processor-3',
        injectedAtMs: 1500,
        healedAtMs: 9000,
        details: { latencyMs: 400 },
      });
    b.op(2000, endMs, 'ok', 'call', {}, { invocationId: 'inv_x' });
    return serviceLevels(slo).check(b.run);
  };
  assert.equal(run(2000 + 3000 + 3 * 400).verdict, 'pass', '3 s of failover + 3 crossings of 400 ms');
  const r = run(2000 + 3000 + 3 * 400 + 300);
  assert.equal(r.verdict, 'fail');
  assert.match(
    r.summary,
    /^failover transfer-leadership@processor-1: 1 ops over 3000 ms \(worst 3300 ms, inv_x\)/,
  );
});

test('an op’s normal time comes off: the p99 before the first fault is not harm', () => {
  const run = (calmMs: number) => {
    const b = new RunBuilder().fault({
      fault: 'kill',
      target: 'processor-1',
      leader: true,
      injectedAtMs: 5000,
      healedAtMs: 9000,
    });
    for (let i = 0; i < 30; i++) b.op(100 + i * 100, 100 + i * 100 + calmMs, 'ok');
    b.op(5000, 5000 + 3500, 'ok', 'call', {}, { invocationId: 'inv_y' });
    return serviceLevels(slo).check(b.run);
  };
  assert.equal(run(10).verdict, 'fail', '3.5 s of failover on a quick machine');
  const slow = run(800);
  assert.equal(slow.verdict, 'pass', 'the same wait where every op takes 800 ms anyway');
  assert.equal((slow.evidence.details as { baselineP99Ms: number }).baselineP99Ms, 800);
});

test('failover: a leader gone silent (paused, partitioned) gets the keepalive’s detection on top', () => {
  const run = (fault: string, details: Record<string, unknown> = {}) => {
    const b = new RunBuilder().fault({
      fault,
      target: 'processor-1',
      leader: true,
      injectedAtMs: 2000,
      healedAtMs: 9000,
      details,
    });
    b.op(2000, 2000 + 5000, 'ok', 'call', {}, { invocationId: 'inv_z' });
    return serviceLevels({ ...slo, silentPeerDetectionMs: 3000 }).check(b.run).verdict;
  };
  assert.equal(run('isolate', { how: 'hold' }), 'pass', '5 s within 3 s + 3 s of keepalive');
  assert.equal(run('pause'), 'pass');
  assert.equal(run('kill'), 'fail', 'a killed leader’s connections close at once');
  assert.equal(run('isolate', { how: 'refuse' }), 'fail', 'refused connections close at once');
});
