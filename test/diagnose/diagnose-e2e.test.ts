// End to end: a failing run on real processes says why. The legacy start-up race and three
// catalogue switches each run once (short suites, fixed seeds); the diagnosis's largest group
// must stop at the hop the bug lives at (service and span) and name the fault that set it off.
// The other switches, on their own suites: diagnose-catalogue-*-e2e.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { latencyRecovers, noClientLeftHanging, noImpossibleErrors } from '../../src/checkers/index.js';
import { at, kill, leaderOf, restart, timeout } from '../../src/faults/index.js';
import { defineSuite, type Suite, type SuiteSpec } from '../../src/runner/suite.js';
import { chaosSuite, namesFault, run, runUntilDiagnosed, topGroup } from './diagnose-e2e-helpers.js';

const short = (spec: Omit<SuiteSpec, 'why'>): Suite =>
  defineSuite({ why: 'diagnosis e2e', converge: '6s', ...spec });

test('reference:legacy start-up race: sends and calls stop at the ingress waiting for a push that never comes', async () => {
  const top = topGroup(
    await run('reference:legacy', await chaosSuite('startup-race.ts'), 1),
    'noClientLeftHanging',
  );
  assert.match(top.service, /^ingress-\d+$/);
  // Sends and calls alike wait for the pushed reply; which kind makes the largest group depends
  // on how many of each the clients had in flight (sends most often, calls on a loaded machine).
  assert.match(top.span, /^ingress (send|call)$/);
  assert.equal(top.problem, 'left hanging');
  assert.match(top.waitingFor ?? '', /no request to a processor in flight/);
  namesFault(top, /^clients-before-processors@/);
  // The leadership of its partition shows the gap the notification fell into.
  assert.ok(
    top.leadership.some((s) => s.leaders.length === 0),
    JSON.stringify(top.leadership),
  );
  // The furthest they got: a processor applied them, and no reply reached the ingress.
  assert.match(top.lastHop?.service ?? '', /^processor-\d+$/);
  assert.match(top.sentence, /no reply reached ingress-\d+/);
});

test('lost-end-response: a call whose End lands across a leader kill stops at the ingress, kill named', async () => {
  const ran = await runUntilDiagnosed(
    'reference+bug:lost-end-response',
    short({
      name: 'diagnose-lost-end',
      topology: { processors: 3, partitions: 2 },
      workload: { concurrency: 16, mix: { call: 0.7, send: 0.3 } },
      warmup: '1500ms',
      // Two leadership changes a run (one per partition): an End meets one of them in most runs.
      schedule: [
        at('1s', kill(leaderOf({ partition: 0 })), { for: '2500ms' }),
        at('4s', kill(leaderOf({ partition: 1 })), { for: '2500ms' }),
      ],
      chaos: '7s',
      expect: [noClientLeftHanging({ withinMsAfterHeal: 5000 })],
    }),
    [7, 8, 9],
  );
  const top = topGroup(ran, 'noClientLeftHanging');
  assert.match(top.service, /^ingress-\d+$/);
  assert.match(top.span, /^ingress (call|send)$/);
  assert.equal(top.problem, 'left hanging');
  namesFault(top, /^kill@processor-\d+$/);
});

test('dead-connection-after-heal: calls after a brief partition stop in an ingress attempt, the partition named', async () => {
  const ran = await runUntilDiagnosed(
    'reference+bug:dead-connection-after-heal',
    short({
      name: 'diagnose-dead-connection',
      topology: { processors: 2, partitions: 2 },
      workload: { concurrency: 12, mix: { call: 1 } },
      warmup: '1500ms',
      schedule: [at('1s', timeout('ingress->processor-1', { timeoutMs: 0 }), { for: '3500ms' })],
      chaos: '10s',
      expect: [latencyRecovers(), noClientLeftHanging({ withinMsAfterHeal: 3000 })],
    }),
    [7, 8],
  );
  const top = topGroup(ran, 'noClientLeftHanging');
  assert.equal(top.problem, 'left hanging');
  // Stopped at the ingress: in an attempt on the dead connection, or between two of them.
  assert.match(top.service, /^ingress-\d+$/);
  assert.match(top.span, /^ingress (call|(submit|get_output) attempt)$/);
  assert.match(top.waitingFor ?? '', /partition \d+/);
  namesFault(top, /^timeout@ingress->processor-1$/);
});

test('lost-leadership-is-final: 500s on a rolling restart are traced to the restarted leader', async () => {
  const ran = await runUntilDiagnosed(
    'reference+bug:lost-leadership-is-final',
    short({
      name: 'diagnose-final',
      topology: { processors: 3, partitions: 3 },
      workload: { concurrency: 24, mix: { call: 0.7, send: 0.3 } },
      warmup: '1500ms',
      schedule: [
        at('1s', restart(leaderOf({ partition: 0 })), { for: '1s' }),
        at('3500ms', restart(leaderOf({ partition: 1 })), { for: '1s' }),
        at('6s', restart(leaderOf({ partition: 2 })), { for: '1s' }),
      ],
      expect: [noImpossibleErrors()],
    }),
    [7, 8],
  );
  const top = topGroup(ran, 'noImpossibleErrors');
  assert.equal(top.problem, 'impossible answer');
  // The answer came from the ingress's attempt that met the lost leadership and was not resent.
  assert.match(top.service, /^ingress-\d+$/);
  assert.match(top.span, /^ingress (submit|get_output) attempt$/);
  assert.equal(top.endedWith, 'lost_leadership');
  namesFault(top, /^restart@processor-\d+$/);
});
