import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildVerdict, createRunDir, pointLatest, toJUnitXml, writeReport } from '../../src/report/index.js';
import { runCheckers, noClientLeftHanging, exactlyOnce, faultsHitTraffic } from '../../src/checkers/index.js';
import { RunBuilder } from '../helpers/run-data-builder.js';

/** Parses XML with Python's expat-based parser (a real, independent XML parser) and returns a summary. */
function parseXml(xml: string): string | undefined {
  const py = spawnSync(
    'python3',
    [
      '-c',
      'import sys,xml.etree.ElementTree as E;r=E.fromstring(sys.stdin.buffer.read());print(r.tag, len(r.findall("./testsuite/testcase")), len(r.findall(".//failure")), len(r.findall(".//skipped")))',
    ],
    { input: xml, encoding: 'utf8' },
  );
  if (py.error !== undefined) return undefined;
  assert.equal(py.status, 0, py.stderr);
  return py.stdout.trim();
}

function sampleRun() {
  const b = new RunBuilder().fault({
    fault: 'kill',
    target: 'processor-1',
    leader: true,
    // As the scheduler records it: the killed leader's links carried bytes while it was down.
    evidence: {
      proxies: ['ingress->processor-1', 'processor-1->log'],
      directions: ['upstream', 'downstream'],
      bytes: 1200,
      connectionsOpened: 2,
      look: 'around',
    },
  });
  b.op(100, 200, 'ok');
  b.invoke(3000, 'call', {}, 'inv_0000beef_<&"quoted">');
  b.add(100, 300, 'ok', 'a', 2, 'k');
  b.finalRead(20_000, 'a', 2);
  return b.run;
}

test('junit.xml is valid XML with one testcase per check; fail → failure, inconclusive → skipped', () => {
  const run = sampleRun();
  const checks = runCheckers(
    [
      noClientLeftHanging(),
      exactlyOnce(),
      faultsHitTraffic(),
      {
        name: 'x\u0001<y>',
        check: () => ({
          name: 'x\u0001<y>',
          verdict: 'inconclusive',
          summary: 'a & b',
          evidence: { details: {} },
        }),
      },
    ],
    run,
  );
  const xml = toJUnitXml([
    {
      name: 'leader-kill',
      target: 'reference',
      seed: 7,
      durationMs: 1234,
      timestamp: run.phases.startedAtWall,
      checks,
    },
  ]);
  assert.match(xml, /inv_0000beef_&lt;&amp;&quot;quoted&quot;&gt;/);
  assert.ok(!xml.includes('\u0001'));
  const parsed = parseXml(xml);
  if (parsed !== undefined) assert.equal(parsed, 'testsuites 4 1 1');
});

test('a run directory holds verdict, junit, history, series and faults; latest points at it', (t) => {
  const out = mkdtempSync(join(tmpdir(), 'limbo-runs-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const run = sampleRun();
  const checks = runCheckers([noClientLeftHanging(), exactlyOnce()], run);
  const dir = createRunDir(out, 'leader kill/1', new Date(Date.UTC(2026, 10, 30, 19, 4, 10, 123)));
  assert.equal(dir, join(out, 'leader_kill_1', '2026-11-30T19-04-10.123Z'));
  const verdict = buildVerdict(run, checks, {
    durationMs: 30_000,
    replay: 'npx limbo run chaos/leader-kill.ts --seed 1',
  });
  assert.equal(verdict.verdict, 'fail');
  assert.deepEqual(verdict.ops, { total: 4, ok: 3, fail: 0, info: 0, open: 1 });
  writeReport(dir, run, verdict);
  pointLatest(out, dir);
  pointLatest(out, dir); // replacing it is fine
  assert.equal(readlinkSync(join(out, 'latest')), join('leader_kill_1', '2026-11-30T19-04-10.123Z'));
  for (const f of ['verdict.json', 'junit.xml', 'history.jsonl', 'series.json', 'faults.json'])
    assert.ok(existsSync(join(out, 'latest', f)), f);
  assert.ok(existsSync(join(dir, 'logs')));
  const v = JSON.parse(readFileSync(join(dir, 'verdict.json'), 'utf8')) as typeof verdict;
  assert.deepEqual(v.checks[0]?.evidence.invocationIds, ['inv_0000beef_<&"quoted">']);
  assert.match(v.replay, /--seed 1/);
  const lines = readFileSync(join(dir, 'history.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, run.history.length);
  assert.equal(
    (JSON.parse(readFileSync(join(dir, 'faults.json'), 'utf8')) as { windows: unknown[] }).windows.length,
    1,
  );
});
