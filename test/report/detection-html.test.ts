// detection.html (src/report/detection-html.ts) from plain data: a caught and a missed switch,
// the reference runs and a false alarm, every value escaped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectionHtml, type DetectionPage } from '../../src/report/detection-html.js';

const evil = '<script>alert(1)</script>';

const page: DetectionPage = {
  seed: 7,
  startedAt: '2000-01-01T00:00:00.000Z',
  switches: [
    {
      switch: 'lost-end-response',
      mustCatch: true,
      description: `the leader forgets a reply ${evil}`,
      source: 'src/services/processor/invoker.ts',
      caught: true,
      caughtBy: { suite: 'leader-kill', check: 'noClientLeftHanging' },
      evidence: `1 op hung ${evil}`,
      secondsToFail: 12.5,
      runs: [{ suite: 'leader-kill', verdict: 'fail', failing: ['noClientLeftHanging'] }],
    },
    {
      switch: 'stale-read',
      mustCatch: false,
      description: 'a follower answers',
      source: 'src/services/processor/replica.ts',
      caught: false,
      runs: [],
    },
  ],
  score: { caught: 1, total: 2 },
  missedMustCatch: [],
  reference: [
    { suite: 'leader-kill', verdict: 'pass', failing: [] },
    { suite: `partition ${evil}`, verdict: 'fail', failing: ['exactlyOnce'] },
  ],
  falseAlarms: [{ suite: `partition ${evil}`, verdict: 'fail', failing: ['exactlyOnce'] }],
};

test('detection.html lists each switch, what caught it and the reference runs, escaped', () => {
  const html = detectionHtml(page);
  assert.ok(!html.includes(evil), 'a value reached the page unescaped');
  assert.match(html, /Score <b>1\/2<\/b>; must-catch missed: none; false alarms on reference: <b>1<\/b>/);
  assert.match(html, /<tr class="caught"><td><b>lost-end-response<\/b><br>/);
  assert.match(html, /<td>leader-kill \/ noClientLeftHanging<\/td><td>12.5<\/td>/);
  assert.match(html, /<tr class="missed"><td><b>stale-read<\/b> <i>\(optional\)<\/i>/);
  assert.match(html, /<td>MISSED<\/td><td>-<\/td>/);
  assert.match(html, /<tr class="missed"><td>partition &#60;script&#62;/);
  assert.match(html, /<td>exactlyOnce<\/td><\/tr>/);
});
