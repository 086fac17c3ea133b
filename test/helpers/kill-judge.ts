// A deterministic stand-in for a system under explore's tests that are about explore itself
// (its slots, its shards), not about a cluster: a schedule fails when it holds a kill.
import type { VerdictFile } from '../../src/run-data/verdict.js';
import type { Suite } from '../../src/runner/suite.js';

/** Whether the kill judge fails this schedule. */
export const holdsKill = (suite: Suite): boolean => suite.schedule.some((e) => e.fault.name === 'kill');

/** The verdict the kill judge gives a schedule on reference:legacy. */
export function killJudgeVerdict(suite: Suite, seed: number): VerdictFile {
  const kill = holdsKill(suite);
  return {
    suite: suite.name,
    target: 'reference:legacy',
    seed,
    verdict: kill ? 'fail' : 'pass',
    startedAt: '',
    durationMs: 0,
    ops: { total: 0, ok: 0, fail: 0, info: 0, open: 0 },
    faults: suite.schedule.length,
    checks: kill
      ? [{ name: 'noClientLeftHanging', verdict: 'fail', summary: 'x', evidence: { details: {} } }]
      : [],
    replay: '',
    runErrors: [],
  };
}
