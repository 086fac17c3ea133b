// The give-up and burst options: what is accepted (and what a bad value says), what the
// defaults are, that give-up decisions replay from the seed and draw from their own stream,
// and when a burst's ops are due.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRandom } from '../../src/util/random.js';
import { UsageError } from '../../src/util/errors.js';
import { giveUpDraws, parseGiveUp, type GiveUpSpec } from '../../src/workload/give-up.js';
import { burstAt, burstOpsDue, opsPerBurst, parseBursts, type BurstSpec } from '../../src/workload/bursts.js';
import { checkWorkloadSpec } from '../../src/workload/workload.js';

test('parseGiveUp: a good spec as given, absent stays off, each bad field named', () => {
  assert.equal(parseGiveUp(undefined), undefined);
  assert.deepEqual(parseGiveUp({ fraction: 0.25, afterMs: [10, 200], retry: 'same-key' }), {
    fraction: 0.25,
    afterMs: [10, 200],
    retry: 'same-key',
  });
  assert.deepEqual(parseGiveUp({ fraction: 1, afterMs: [0, 0], retry: 'none' })?.afterMs, [0, 0]);
  const bad: [unknown, RegExp][] = [
    [{ fraction: 1.5, afterMs: [1, 2], retry: 'none' }, /fraction must be a number from 0 to 1/],
    [{ fraction: -0.1, afterMs: [1, 2], retry: 'none' }, /fraction/],
    [{ fraction: Number.NaN, afterMs: [1, 2], retry: 'none' }, /fraction/],
    [{ fraction: 0.1, afterMs: [20, 10], retry: 'none' }, /afterMs must be \[min, max\]/],
    [{ fraction: 0.1, afterMs: [1.5, 10], retry: 'none' }, /afterMs/],
    [{ fraction: 0.1, afterMs: [10], retry: 'none' }, /afterMs/],
    [{ fraction: 0.1, afterMs: [0, 700_000], retry: 'none' }, /afterMs/],
    [{ fraction: 0.1, afterMs: [1, 2], retry: 'other-key' }, /retry must be 'same-key' or 'none'/],
    [null, /must be an object/],
  ];
  for (const [spec, message] of bad)
    assert.throws(
      () => parseGiveUp(spec as GiveUpSpec),
      (e: unknown) =>
        e instanceof UsageError && message.test(e.message) && /workload\.giveUp/.test(e.message),
      JSON.stringify(spec),
    );
});

test('give-up decisions replay from the seed, follow the fraction and the range, and use their own stream', () => {
  const plan = parseGiveUp({ fraction: 0.3, afterMs: [20, 80], retry: 'same-key' })!;
  const drawsOf = (seed: number, client: number, n: number) => {
    const d = giveUpDraws(plan, createRandom(seed).fork(`give-up-${client}`));
    return Array.from({ length: n }, () => d.next());
  };
  const a = drawsOf(7, 0, 1000);
  assert.deepEqual(a, drawsOf(7, 0, 1000), 'the same seed and client: the same decisions');
  assert.notDeepEqual(a, drawsOf(8, 0, 1000), 'another seed: other decisions');
  assert.notDeepEqual(a, drawsOf(7, 1, 1000), 'another client: other decisions');
  const given = a.filter((x): x is number => x !== undefined);
  assert.ok(given.length > 240 && given.length < 360, `${given.length} of 1000 give up at fraction 0.3`);
  assert.ok(given.every((ms) => Number.isInteger(ms) && ms >= 20 && ms <= 80));
  assert.ok(new Set(given).size > 40, 'the delays spread over the range');
  assert.ok(
    drawsOf(7, 0, 200).every((x, i) => x === a[i]),
    'a decision does not depend on later ones',
  );
  const never = giveUpDraws({ ...plan, fraction: 0 }, createRandom(1));
  const always = giveUpDraws({ ...plan, fraction: 1 }, createRandom(1));
  for (let i = 0; i < 100; i++) {
    assert.equal(never.next(), undefined);
    assert.notEqual(always.next(), undefined);
  }
  // Drawing give-ups from a fork leaves the client's own stream (its op mix) as it was.
  const client = createRandom(7).fork('client-0');
  const untouched = createRandom(7).fork('client-0');
  drawsOf(7, 0, 50);
  assert.deepEqual(
    Array.from({ length: 20 }, () => client.next()),
    Array.from({ length: 20 }, () => untouched.next()),
  );
});

test('parseBursts: defaults, and each bad field named', () => {
  assert.equal(parseBursts(undefined), undefined);
  assert.deepEqual(parseBursts({ everyMs: 5000, lengthMs: 1000, ratePerSec: 300 }), {
    everyMs: 5000,
    lengthMs: 1000,
    ratePerSec: 300,
    firstAtMs: 5000,
    maxInFlight: 300,
    mix: undefined,
  });
  const full = parseBursts({
    everyMs: 2000,
    lengthMs: 2000,
    ratePerSec: 50.5,
    firstAtMs: 0,
    maxInFlight: 7,
    mix: { call: 1, counterAdd: 0 },
  });
  assert.deepEqual(full, {
    everyMs: 2000,
    lengthMs: 2000,
    ratePerSec: 50.5,
    firstAtMs: 0,
    maxInFlight: 7,
    mix: { call: 1, counterAdd: 0 },
  });
  const ok = { everyMs: 1000, lengthMs: 100, ratePerSec: 100 };
  const bad: [unknown, RegExp][] = [
    [{ ...ok, everyMs: 0 }, /everyMs must be a whole number of ms ≥ 1/],
    [{ ...ok, lengthMs: 1.5 }, /lengthMs must be a whole number/],
    [{ ...ok, lengthMs: 1001 }, /lengthMs \(1001\) must not exceed everyMs \(1000\)/],
    [{ ...ok, ratePerSec: 0 }, /ratePerSec must be a number above 0/],
    [{ ...ok, ratePerSec: 1e9 }, /ratePerSec/],
    [{ ...ok, firstAtMs: -1 }, /firstAtMs must be a whole number of ms ≥ 0/],
    [{ ...ok, maxInFlight: 0 }, /maxInFlight must be a whole number from 1/],
    [{ ...ok, mix: { call: 0 } }, /mix must weigh some of call, send/],
    [{ ...ok, mix: { get: 1 } }, /mix.*got get: 1/],
    [{ ...ok, mix: { call: -1 } }, /mix/],
    ['often', /must be an object/],
  ];
  for (const [spec, message] of bad)
    assert.throws(
      () => parseBursts(spec as BurstSpec),
      (e: unknown) =>
        e instanceof UsageError && message.test(e.message) && /workload\.bursts/.test(e.message),
      JSON.stringify(spec),
    );
});

test('checkWorkloadSpec checks both options, and a spec without them is fine', () => {
  assert.deepEqual(checkWorkloadSpec({ concurrency: 4 }), {});
  const both = checkWorkloadSpec({
    giveUp: { fraction: 0.1, afterMs: [1, 2], retry: 'none' },
    bursts: { everyMs: 10, lengthMs: 5, ratePerSec: 1000 },
  });
  assert.equal(both.giveUp?.retry, 'none');
  assert.equal(both.bursts?.maxInFlight, 5);
  assert.throws(
    () => checkWorkloadSpec({ bursts: { everyMs: 10, lengthMs: 50, ratePerSec: 1 } }),
    UsageError,
  );
});

test('a burst starts its ops evenly over its length, the k-th at k/rate s, and all of them by its end', () => {
  const plan = parseBursts({ everyMs: 1000, lengthMs: 200, ratePerSec: 100, firstAtMs: 500 })!;
  assert.equal(opsPerBurst(200, 100), 20);
  assert.equal(burstOpsDue(plan, 0), 0);
  assert.equal(burstOpsDue(plan, 499.9), 0, 'none before the first burst');
  assert.equal(burstOpsDue(plan, 500), 1, 'the first op at its start');
  assert.equal(burstOpsDue(plan, 509.9), 1);
  assert.equal(burstOpsDue(plan, 510), 2, 'the next 1/rate s later');
  assert.equal(burstOpsDue(plan, 599), 10);
  assert.equal(burstOpsDue(plan, 690), 20);
  assert.equal(burstOpsDue(plan, 700), 20, 'the whole burst by its end');
  assert.equal(burstOpsDue(plan, 1499), 20, 'nothing between bursts');
  assert.equal(burstOpsDue(plan, 1500), 21, 'the second burst');
  assert.equal(burstOpsDue(plan, 10_699), 11 * 20, 'the eleventh burst, whole by its last op');
  assert.deepEqual(burstAt(plan, 100), { index: -1, inBurst: false, nextStartMs: 500 });
  assert.deepEqual(burstAt(plan, 600), { index: 0, inBurst: true, nextStartMs: 1500 });
  assert.deepEqual(burstAt(plan, 700), { index: 0, inBurst: false, nextStartMs: 1500 });
  assert.deepEqual(burstAt(plan, 2650), { index: 2, inBurst: true, nextStartMs: 3500 });
  // Monotonic: a tick never sees fewer ops due than the one before.
  let last = 0;
  for (let t = 0; t < 5000; t += 0.7) {
    const due = burstOpsDue(plan, t);
    assert.ok(due >= last, `at ${t} ms`);
    last = due;
  }
  assert.equal(last, 5 * 20);
  // A rate too low for one op in a burst makes none.
  const tiny = parseBursts({ everyMs: 1000, lengthMs: 100, ratePerSec: 5 })!;
  assert.equal(burstOpsDue(tiny, 1050), 0);
});
