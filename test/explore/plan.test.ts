import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createFault } from '../../src/faults/registry.js';
import {
  exploreFaultKinds,
  generateSchedule,
  internalLinks,
  occupies,
  toScheduleEntries,
  type PlannedFault,
} from '../../src/explore/plan.js';
import { createRandom } from '../../src/util/random.js';

const topology = { processors: 3, partitions: 4, ingresses: 1 };
const options = { topology, chaosMs: 10_000, maxFaults: 4, kinds: exploreFaultKinds };

test('one seed draws one schedule; another seed a different one', () => {
  const a = generateSchedule(createRandom(42), options);
  const b = generateSchedule(createRandom(42), options);
  assert.deepEqual(a, b);
  const others = [1, 2, 3, 4, 5].map((s) => JSON.stringify(generateSchedule(createRandom(s), options)));
  assert.ok(new Set([...others, JSON.stringify(a)]).size > 1, 'different seeds give different schedules');
});

test('every drawn fault is a registered fault with valid parameters, inside the chaos phase', () => {
  const kinds = new Set<string>();
  for (let seed = 0; seed < 300; seed++) {
    const planned = generateSchedule(createRandom(seed), options);
    assert.ok(planned.length >= 1 && planned.length <= options.maxFaults);
    for (const p of planned) {
      kinds.add(p.fault);
      assert.ok(p.atMs >= 0 && p.atMs + 0 <= options.chaosMs - 2000, `starts in the chaos phase: ${p.atMs}`);
      assert.ok(p.forMs >= 500 && p.forMs <= 4000);
      createFault(p.fault, p.params); // throws on unknown names or bad parameters
      if (typeof p.params.on === 'string' && p.params.on.includes('->')) {
        assert.ok(internalLinks(topology).includes(p.params.on), `a link of the topology: ${p.params.on}`);
        assert.ok(!p.params.on.startsWith('client->'));
      }
    }
    assert.equal(toScheduleEntries(planned).length, planned.length);
    assert.deepEqual(
      planned.map((p) => p.atMs),
      [...planned.map((p) => p.atMs)].sort((x, y) => x - y),
    );
  }
  assert.deepEqual([...kinds].sort(), [...exploreFaultKinds].sort(), 'every kind is drawn');
});

test('no two faults on the same link or on processes overlap in time', () => {
  const proc = (f: PlannedFault): boolean =>
    occupies(f) === 'processes' || occupies(f).startsWith('service ');
  let pairs = 0;
  for (let seed = 0; seed < 300; seed++) {
    const planned = generateSchedule(createRandom(seed), options);
    for (const a of planned)
      for (const b of planned) {
        if (a === b) continue;
        pairs++;
        const overlap = a.atMs < b.atMs + b.forMs && b.atMs < a.atMs + a.forMs;
        const shared = occupies(a) === occupies(b) || (proc(a) && proc(b));
        assert.ok(!(overlap && shared), `seed ${seed}: ${JSON.stringify(a)} overlaps ${JSON.stringify(b)}`);
      }
  }
  // Schedules of one fault each would leave nothing above checked.
  assert.ok(pairs >= 300, `only ${pairs} pairs of faults drawn over 300 seeds`);
});

test('a restricted catalogue draws only the kinds asked for', () => {
  for (let seed = 0; seed < 50; seed++) {
    const planned = generateSchedule(createRandom(seed), { ...options, kinds: ['kill'] });
    assert.ok(planned.length >= 1, `seed ${seed} drew nothing`);
    for (const p of planned) assert.equal(p.fault, 'kill');
  }
});
