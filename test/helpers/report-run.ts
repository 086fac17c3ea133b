// A real short run for the report's tests: `limbo run --coverage` of a small suite whose faults
// strike a leader (a kill), another processor (a pause) and the leader's link to the log (a
// latency), so its fault space has met cells, kinds never met on a subject (no kill of a
// follower, no pause of the leader) and a link beside the processes, and its coverage.json
// holds the reference cluster's services. The suite file is written inside the package (so
// `import … from 'limbo'` resolves) and removed with the runs when the test process exits.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findRunFiles } from '../../src/coverage/map.js';
import { runFiles } from '../../src/run-data/files.js';
import { limboSync, packageRoot } from './limbo-cli.js';

const SUITE = `import { at, defineSuite, kill, latency, leaderOf, link, noClientLeftHanging, pause, randomOf } from 'limbo';
export default defineSuite({
  name: 'report-short-faults',
  why: 'a short run whose faults strike a leader, another processor and a link, for the report tests',
  topology: { processors: 2, partitions: 1 },
  workload: { concurrency: 4 },
  warmup: '1s',
  schedule: [
    at('300ms', latency(link(leaderOf({ partition: 0 }), 'log'), { latencyMs: 100 }), { for: '800ms' }),
    at('1500ms', pause(randomOf('processor')), { for: '600ms' }),
    at('2600ms', kill(leaderOf({ partition: 0 })), { for: '1500ms' }),
  ],
  chaos: '5s',
  converge: '4s',
  expect: [noClientLeftHanging()],
});
`;

export interface ReportRun {
  /** The run directory (report.html, coverage.json, fault-space.json, …). */
  runDir: string;
  /** What `limbo run` printed. */
  stdout: string;
}

/** Runs the suite once at `seed` with --coverage; its run directory. Its verdict may be pass or fail. */
export function reportRun(seed = 3): ReportRun {
  mkdirSync(join(packageRoot, '.limbo'), { recursive: true });
  const root = mkdtempSync(join(packageRoot, '.limbo', 'report-run-'));
  process.on('exit', () => rmSync(root, { recursive: true, force: true }));
  const suite = join(root, 'short-faults.ts');
  writeFileSync(suite, SUITE);
  const out = join(root, 'runs');
  const r = limboSync(['run', suite, '--seed', String(seed), '--coverage', '--out', out], 180_000);
  // 0: the run passed, 1: a check failed; either leaves a whole run directory.
  assert.ok(r.status === 0 || r.status === 1, `limbo run exited ${r.status}: ${r.stdout}${r.stderr}`);
  const verdicts = findRunFiles([out], runFiles.verdict);
  assert.equal(verdicts.length, 1, r.stdout + r.stderr);
  return { runDir: dirname(verdicts[0]!), stdout: r.stdout };
}
