// End to end: a failing run on real processes says why. The legacy start-up race and three
// catalogue switches each run once (short suites, fixed seeds); the diagnosis's largest group
// must stop at the hop the bug lives at (service and span) and name the fault that set it off.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { latencyRecovers, noClientLeftHanging, noImpossibleErrors } from '../../src/checkers/index.js';
import { at, kill, leaderOf, restart, timeout } from '../../src/faults/index.js';
import { escapeXml } from '../../src/report/junit.js';
import { runFiles } from '../../src/run-data/files.js';
import type { DiagnosisGroup, VerdictFile } from '../../src/run-data/verdict.js';
import { loadSuite } from '../../src/runner/load-suites.js';
import { runSuite } from '../../src/runner/run-suite.js';
import { defineSuite, type Suite, type SuiteSpec } from '../../src/runner/suite.js';
import { createTarget } from '../../src/targets/registry.js';

interface Ran {
  verdict: VerdictFile;
  junit: string;
}

async function run(target: string, suite: Suite, seed: number): Promise<Ran> {
  const out = mkdtempSync(join(tmpdir(), 'limbo-diagnose-'));
  try {
    const res = await runSuite(suite, { target: createTarget(target), seed, outRoot: out, replay: 'test' });
    return { verdict: res.verdict, junit: readFileSync(join(res.runDir, runFiles.junit), 'utf8') };
  } finally {
    // LIMBO_KEEP_RUNS=1 keeps the run directories to read (their path is printed).
    if (process.env['LIMBO_KEEP_RUNS'] === '1') console.log(`  run kept in ${out}`);
    else rmSync(out, { recursive: true, force: true });
  }
}

/** A switch shows only when a fault meets its moment: a few fixed seeds, until a check names an op. */
async function runUntilDiagnosed(target: string, suite: Suite, seeds: readonly number[]): Promise<Ran> {
  let ran: Ran | undefined;
  for (const seed of seeds) {
    ran = await run(target, suite, seed);
    if (ran.verdict.diagnosis !== undefined) break;
  }
  return ran!;
}

const short = (spec: Omit<SuiteSpec, 'why'>): Suite =>
  defineSuite({ why: 'diagnosis e2e', converge: '6s', ...spec });

/**
 * The largest group among the ops `check` (the check that catches the bug) named: the group its
 * JUnit failure leads with. Other checks may name other ops (serviceLevels, held on every run,
 * names every slow op), and their groups may be larger.
 */
function topGroup(ran: Ran, check: string): DiagnosisGroup {
  const d = ran.verdict.diagnosis;
  assert.ok(
    d,
    `a diagnosis: ${ran.verdict.checks.map((c) => `${c.name} ${c.verdict}: ${c.summary}`).join('\n')}`,
  );
  for (const g of d.groups.slice(0, 3)) console.log(`  ${g.sentence}`);
  assert.equal(d.traced, true);
  const top = d.groups.find((g) => g.checks.includes(check));
  assert.ok(top, `a group of ops ${check} named: ${JSON.stringify(d.groups.map((g) => [g.key, g.checks]))}`);
  console.log(`  ${check}: ${top.sentence}`);
  // The JUnit failure of that check starts with the diagnosis.
  const failure = new RegExp(`<testcase name="${check}"[^>]*>\\s*<failure message="why: ([^"]*)"`).exec(
    ran.junit,
  );
  assert.ok(failure, ran.junit);
  assert.ok(failure[1]!.startsWith(escapeXml(top.sentence)), failure[1]);
  return top;
}

/** The group names a fault matching `fault`, in its faults and in its sentence. */
function namesFault(g: DiagnosisGroup, fault: RegExp): void {
  const named = g.faults.find((f) => fault.test(f.name));
  assert.ok(named, `fault ${String(fault)} in ${JSON.stringify(g.faults)}`);
  assert.ok(g.sentence.includes(named.name), g.sentence);
}

test('reference:legacy start-up race: sends stop at the ingress waiting for a push that never comes', async () => {
  const { suite } = await loadSuite(join(process.cwd(), 'chaos', 'startup-race.ts'));
  const top = topGroup(await run('reference:legacy', suite, 1), 'noClientLeftHanging');
  assert.match(top.service, /^ingress-\d+$/);
  assert.equal(top.span, 'ingress send');
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
