// limbo detect on a switch no suite claims: a bounded explore runs instead, and its first
// failing schedule is what catches the switch (or, with no explore runs, it is reported missed).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runDetection } from '../../src/detect/detect.js';
import { loadSuites } from '../../src/runner/load-suites.js';

test('a switch no suite claims is explored: the failing schedule catches it, with evidence', async () => {
  const out = mkdtempSync(join(tmpdir(), 'limbo-detect-explore-'));
  try {
    // startup-race claims lost-submit-notification only.
    const suites = await loadSuites(['chaos/startup-race.ts']);
    const lines: string[] = [];
    const common = {
      suites,
      switches: ['idempotency-key-ignored'] as const,
      seed: 3,
      outRoot: out,
      runtime: { name: 'local' as const },
      reference: false,
      onLine: (l: string) => lines.push(l),
    };
    const none = await runDetection({ ...common, exploreRuns: 0 });
    assert.equal(none.switches[0]!.caught, false);
    assert.deepEqual(none.missedMustCatch, ['idempotency-key-ignored']);
    assert.equal(none.switches[0]!.runs.length, 0);

    const report = await runDetection({ ...common, exploreRuns: 1 });
    const r = report.switches[0]!;
    assert.ok(
      lines.some((l) => l.includes('no suite claims it: limbo explore, 1 random schedule')),
      lines.join('\n'),
    );
    assert.equal(r.runs.length, 1);
    assert.equal(r.caught, true, JSON.stringify(r.runs));
    assert.match(r.caughtBy!.suite, /^explore, schedule seed \d+$/);
    assert.equal(r.caughtBy!.check, 'idempotentRetriesAgree');
    assert.match(r.evidence!, /idempotency keys got different answers/);
    assert.deepEqual(report.score, { caught: 1, total: 1 });
    // The failing schedule is saved as a seed file a person can replay.
    assert.ok(existsSync(join(out, 'detect-seeds')));
    assert.equal(readdirSync(join(out, 'detect-seeds')).length, 1);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
