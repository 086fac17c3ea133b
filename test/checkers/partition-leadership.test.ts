// The leadership timeline from the is-leader gauges: a node's value stands only while its
// samples keep coming, so a killed leader stops counting a few scrapes after its last sample
// instead of "leading" beside its successor for the rest of the run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leadershipTimeline } from '../../src/checkers/partition-leadership.js';
import { metricNames } from '../../src/protocol/names.js';
import { RunBuilder } from '../helpers/run-data-builder.js';

/** is-leader samples of `node` for partition 0 every 250 ms over [fromMs, toMs]. */
function scraped(
  b: RunBuilder,
  node: string,
  fromMs: number,
  toMs: number,
  value: (t: number) => number,
): void {
  const points: [number, number][] = [];
  for (let t = fromMs; t <= toMs; t += 250) points.push([t, value(t)]);
  b.sample(node, metricNames.processorIsLeader, { partition: '0', service: node }, points);
}

test('a leader whose samples stop (killed) stops leading once more than three scrape intervals pass; its successor then leads alone', () => {
  const b = new RunBuilder();
  // processor-1 leads until it is killed at 2 s (its last sample); processor-2 takes over at 2.5 s.
  scraped(b, 'processor-1', 0, 2000, () => 1);
  scraped(b, 'processor-2', 0, 10_000, (t) => (t >= 2500 ? 1 : 0));
  const changes = leadershipTimeline(b.run).map((c) => [c.tMs, c.leaders.join(',')]);
  assert.deepEqual(changes, [
    [0, 'processor-1'],
    [2500, 'processor-1,processor-2'],
    [3000, 'processor-2'],
  ]);
  // A node that comes back and reports again counts again.
  scraped(b, 'processor-1', 6000, 10_000, (t) => (t >= 8000 ? 1 : 0));
  const after = leadershipTimeline(b.run).filter((c) => c.tMs >= 6000);
  assert.deepEqual(
    after.map((c) => [c.tMs, c.leaders.join(',')]),
    [[8000, 'processor-1,processor-2']],
  );
});

test('samples that keep coming hold their value however long nothing changes', () => {
  const b = new RunBuilder();
  scraped(b, 'processor-1', 0, 60_000, () => 1);
  scraped(b, 'processor-2', 0, 60_000, () => 0);
  assert.deepEqual(
    leadershipTimeline(b.run).map((c) => [c.tMs, c.leaders]),
    [[0, ['processor-1']]],
  );
});
