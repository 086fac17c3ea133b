// The queue used for backlogs (log appends, the log client's batcher, the invoker): the same
// answers as a plain array used as a queue, over long random runs that cross the point where
// its freed front is cut off, and with backlogs far past it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Fifo } from '../../src/util/fifo.js';
import { createRandom } from '../../src/util/random.js';

for (const seed of [1, 2, 3]) {
  test(`answers as an array does, over a random run (seed ${seed})`, () => {
    const rng = createRandom(seed);
    const random = (): number => rng.next();
    const fifo = new Fifo<number>();
    const model: number[] = [];
    let next = 0;
    for (let step = 0; step < 60_000; step++) {
      const r = random();
      // Phases that grow the backlog to thousands, then drain it.
      const growing = Math.floor(step / 5000) % 2 === 0;
      if (r < (growing ? 0.62 : 0.35)) {
        fifo.push(next);
        model.push(next++);
      } else if (r < 0.97) {
        assert.equal(fifo.peek(), model[0]);
        assert.equal(fifo.shift(), model.shift());
      } else if (r < 0.986) {
        assert.deepEqual(fifo.takeAll(), model.splice(0));
      }
      assert.equal(fifo.length, model.length);
      const i = Math.floor(random() * (model.length + 2)) - 1;
      assert.equal(fifo.at(i), model[i]);
    }
    assert.deepEqual([...fifo], model);
  });
}

test('drains a backlog of 100,000 in order, and is empty after', () => {
  const fifo = new Fifo<{ i: number }>();
  for (let i = 0; i < 100_000; i++) fifo.push({ i });
  for (let i = 0; i < 100_000; i++) assert.equal(fifo.shift()?.i, i);
  assert.equal(fifo.length, 0);
  assert.equal(fifo.shift(), undefined);
  assert.equal(fifo.peek(), undefined);
  fifo.push({ i: 7 });
  assert.deepEqual(fifo.takeAll(), [{ i: 7 }]);
});
