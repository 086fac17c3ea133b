// End to end: bug switches that leave clients hanging, each on the standard suite that must
// catch it at a fixed seed: the largest group among the ops the catching check named must stop
// at the hop the bug shows at (service and span) and name the fault that set it off
// (docs/traces-and-report.md#the-catalogue-diagnosed has the table and how often each seed
// reproduces). The switches are split over three files so that each stays within a test
// file's time bound: diagnose-catalogue-{hangs,answers,signals}-e2e.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chaosSuite, namesFault, run, runUntilDiagnosed, topGroup } from './diagnose-e2e-helpers.js';

test('lost-submit-notification (startup-race): sends and calls stop at the ingress waiting for a push, the start-up race named', async () => {
  const ran = await run('reference+bug:lost-submit-notification', await chaosSuite('startup-race.ts'), 1);
  const top = topGroup(ran, 'noClientLeftHanging');
  assert.equal(top.problem, 'left hanging');
  assert.match(top.service, /^ingress-\d+$/);
  // Sends and calls alike wait for the lost push; which kind makes the largest group depends on
  // how many of each were in flight (both seen at seed 1).
  assert.match(top.span, /^ingress (send|call)$/);
  assert.match(top.waitingFor ?? '', /no request to a processor in flight/);
  namesFault(top, /^clients-before-processors@/);
});

test('never-resumes (leader-transfer): calls on a key the new leader never resumed stop in their submit, the transfer named', async () => {
  // Slow appends keep keyed invocations running across each transfer; a leader kill met one only
  // while the machine was loaded (leader-kill at seeds 4, 7 and 1 all passed on a quieter one).
  const ran = await runUntilDiagnosed(
    'reference+bug:never-resumes',
    await chaosSuite('leader-transfer.ts'),
    [7, 8],
    'noClientLeftHanging',
  );
  const top = topGroup(ran, 'noClientLeftHanging');
  assert.equal(top.problem, 'left hanging');
  // Waiting for the invocation to be accepted: at the new leader's submit, or the ingress's
  // attempt that carries it there.
  assert.match(top.service, /^(processor|ingress)-\d+$/);
  assert.match(top.span, /^(processor submit|ingress submit attempt)$/);
  namesFault(top, /^(transfer-leadership@processor-\d+|latency@processor-\d+->log)$/);
});

test('read-skips-after-reconnect (log-restarts): calls hang after the log restarts, the log kill named', async () => {
  // Seed 4 meets the skipped read in most runs; under load it may not, and the next seeds do.
  const ran = await runUntilDiagnosed(
    'reference+bug:read-skips-after-reconnect',
    await chaosSuite('log-restarts.ts'),
    [4, 2, 3],
    'noClientLeftHanging',
  );
  const top = topGroup(ran, 'noClientLeftHanging');
  assert.equal(top.problem, 'left hanging');
  // A skipped Invoke leaves the call at the ingress (or its submit at the processor) for good; a
  // skipped leader announce leaves the partition without a leader, the ingress resending — a
  // call, or a send's attach, waiting at the ingress for the partition's leader; a skipped
  // Invoke or End leaves a send's attach in its get_output attempt, waiting for an output that
  // never comes (seen on a loaded machine).
  assert.match(top.service, /^(ingress|processor)-\d+$/);
  assert.match(
    top.span,
    /^(ingress call|ingress attach|ingress submit attempt|ingress get_output attempt|processor submit)$/,
  );
  if (top.span === 'ingress call' || top.span === 'ingress attach')
    assert.match(top.waitingFor ?? '', /resend to partition \d+'s leader|pushed reply/, top.sentence);
  if (top.span === 'ingress get_output attempt')
    assert.match(top.waitingFor ?? '', /partition \d+'s get_output reply/, top.sentence);
  namesFault(top, /^kill@log$/);
});
