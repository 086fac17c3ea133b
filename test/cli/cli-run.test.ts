import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { loadSuite, loadSuites } from '../../src/runner/load-suites.js';
import { UsageError } from '../../src/util/errors.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
// Suite files are written at test time inside the package (so `import … from 'limbo'` resolves
// through the package's self-reference) and not under test/, where `node --test` would run them.
mkdirSync(join(root, '.limbo'), { recursive: true });
const fixtures = mkdtempSync(join(root, '.limbo', 'suites-'));
process.on('exit', () => rmSync(fixtures, { recursive: true, force: true }));
writeFileSync(
  join(fixtures, 'good-suite.ts'),
  `import { at, defineSuite, kill, leaderOf, noClientLeftHanging } from 'limbo';
export default defineSuite({
  name: 'fixture-good',
  why: 'the loader test loads it',
  schedule: [at('1s', kill(leaderOf({ partition: 0 })), { for: '1s' })],
  expect: [noClientLeftHanging()],
});
`,
);
writeFileSync(
  join(fixtures, 'bad-suite.ts'),
  `import { defineSuite } from 'limbo';
export default defineSuite({ name: 'fixture-bad', why: 'it has no checks', schedule: [], expect: [] });
`,
);
const limbo = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'bin', 'limbo.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });

test('suite files load in the runner and import the public API as `limbo`', async () => {
  const { suite } = await loadSuite(join(fixtures, 'good-suite.ts'));
  assert.equal(suite.name, 'fixture-good');
  assert.equal(suite.schedule[0]?.fault.describe, 'leaderOf(0)');
  await assert.rejects(
    loadSuite(join(fixtures, 'bad-suite.ts')),
    (err: unknown) => err instanceof UsageError && /bad-suite\.ts.*checker/s.test(err.message),
  );
  await assert.rejects(loadSuites(['no/such/dir']), UsageError);
});

test('every suite in chaos/ loads and is valid', async () => {
  const loaded = await loadSuites([join(root, 'chaos')]);
  assert.ok(loaded.length >= 8);
  for (const { suite } of loaded) assert.ok(suite.why.length > 0 && suite.expect.length > 0, suite.name);
  assert.ok(loaded.some((l) => l.suite.name === 'leader-kill'));
});

test('limbo run: bad suite files and flags exit 2 with a message naming them', () => {
  let r = limbo('run', join(fixtures, 'bad-suite.ts'));
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /bad-suite\.ts/);
  assert.match(r.stdout, /^seed \d+/, 'the seed is printed first');
  r = limbo('run');
  assert.equal(r.status, 2);
  r = limbo('run', 'chaos', '--target', 'nowhere');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown target nowhere/);
  r = limbo('run', 'chaos', '--seed', 'abc');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--seed/);
  r = limbo('run', '--help');
  assert.equal(r.status, 0);
  assert.match(r.stdout, /--toxiproxy-url/);
});

test('exit codes follow the combined verdict; a failing verdict lists the hung invocation ids', async () => {
  const { exitCodeOf, formatVerdict, summaryTable } = await import('../../src/cli/run.js');
  assert.deepEqual([exitCodeOf('pass'), exitCodeOf('fail'), exitCodeOf('inconclusive')], [0, 1, 3]);
  const v = {
    suite: 'leader-kill',
    target: 'reference:legacy',
    seed: 7,
    verdict: 'fail' as const,
    startedAt: '',
    durationMs: 1500,
    ops: { total: 10, ok: 8, fail: 0, info: 0, open: 2 },
    faults: 1,
    checks: [
      {
        name: 'noClientLeftHanging',
        verdict: 'fail' as const,
        summary: '2 of 10 ops left hanging',
        evidence: { invocationIds: ['inv_00000001_a', 'inv_00000002_b'], details: {} },
      },
    ],
    replay: 'npx limbo run chaos/leader-kill.ts --target reference:legacy --seed 7',
    runErrors: [],
  };
  assert.match(formatVerdict(v), /FAIL[\s\S]*inv_00000001_a inv_00000002_b/);
  // With its run directory, the trace command it prints can be pasted as it is.
  assert.match(
    formatVerdict(v, '/runs/leader-kill/1'),
    /npx limbo trace inv_00000001_a --run \/runs\/leader-kill\/1$/m,
  );
  assert.match(formatVerdict(v), /--run <run directory>$/m);
  assert.match(summaryTable([v]), /leader-kill\s+reference:legacy\s+fail\s+10\s+2\s+1\.5/);
});

test('a suite the target cannot run is shown skipped and neither passes nor spoils the rest; all skipped is inconclusive', async () => {
  const { summaryTable, formatVerdict, skippedVerdict, verdictOfRuns } = await import('../../src/cli/run.js');
  const skipped = skippedVerdict('needs-a-log', 'redis', 1, 'replay', 'redis has no link processor-1->log');
  const passed = { ...skipped, suite: 'runs-here', verdict: 'pass' as const, checks: [] };
  const failed = { ...passed, suite: 'fails-here', verdict: 'fail' as const };
  assert.equal(verdictOfRuns([skipped, passed]), 'pass');
  assert.equal(verdictOfRuns([skipped, passed, failed]), 'fail');
  assert.equal(verdictOfRuns([skipped]), 'inconclusive');
  assert.match(formatVerdict(skipped), /^needs-a-log \[redis\] seed 1: SKIPPED$/m);
  assert.match(
    formatVerdict(skipped),
    /skipped +targetSupported: not run on redis: redis has no link processor-1->log/,
  );
  const table = summaryTable([skipped, passed]);
  assert.match(table, /^needs-a-log\s+redis\s+skipped\s/m);
  assert.match(table, /^runs-here\s+redis\s+pass\s/m);
  // The command: a folder of suites all skipped on reference starts nothing and exits 3.
  const dir = mkdtempSync(join(fixtures, 'skipped-'));
  for (const n of ['a', 'b'])
    writeFileSync(
      join(dir, `${n}.ts`),
      `import { defineSuite, noClientLeftHanging } from 'limbo';
export default defineSuite({ name: 'skipped-${n}', why: 'skipped on reference', schedule: [], expect: [noClientLeftHanging()], skipOn: { reference: 'not for this target' } });
`,
    );
  const r = limbo('run', dir, '--target', 'reference', '--out', join(dir, 'runs'));
  assert.equal(r.status, 3, r.stdout + r.stderr);
  assert.match(r.stdout, /^skipped-a \[reference\] seed \d+: SKIPPED$/m);
  assert.match(r.stdout, /^nothing ran: every suite was skipped on reference \(inconclusive\)$/m);
});
