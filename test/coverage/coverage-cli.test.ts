// The commands end to end: `limbo run … --coverage` leaves coverage.json in the run directory
// (real cluster, real processes, one of them killed mid-run), and `limbo coverage` reads the
// runs back into a table; bad input exits 2 with one line naming it.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { limboSync, packageRoot } from '../helpers/limbo-cli.js';
import { findCoverageFiles } from '../../src/coverage/map.js';

const root = packageRoot;
// Written inside the package so `import … from 'limbo'` resolves, and not under test/.
mkdirSync(join(root, '.limbo'), { recursive: true });
const fixtures = mkdtempSync(join(root, '.limbo', 'coverage-'));
process.on('exit', () => rmSync(fixtures, { recursive: true, force: true }));
writeFileSync(
  join(fixtures, 'short-kill.ts'),
  `import { at, defineSuite, kill, leaderOf, noClientLeftHanging } from 'limbo';
export default defineSuite({
  name: 'coverage-short-kill',
  why: 'a short run with a leader killed, for the coverage test',
  topology: { processors: 2, partitions: 1 },
  workload: { concurrency: 4 },
  warmup: '1s',
  schedule: [at('500ms', kill(leaderOf({ partition: 0 })), { for: '1500ms' })],
  chaos: '3s',
  converge: '4s',
  expect: [noClientLeftHanging()],
});
`,
);

const limbo = (...args: string[]) => limboSync(args, 120_000);

test('limbo run --coverage writes coverage.json; limbo coverage prints the files, the total and the unreached branches', () => {
  const out = join(fixtures, 'runs');
  const run = limbo('run', join(fixtures, 'short-kill.ts'), '--seed', '3', '--coverage', '--out', out);
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /coverage: npx limbo coverage /);
  const files = findCoverageFiles([out]);
  assert.equal(files.length, 1);
  // The raw per-second files are gone once converted.
  assert.ok(!readdirSync(join(files[0]!, '..')).includes('coverage-raw'));
  const shown = limbo('coverage', out, '--unreached', '5');
  assert.equal(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, /^coverage of src\/services\/ over 1 run\(s\)$/m);
  for (const file of ['ingress/router.ts', 'log/log-server.ts', 'processor/partition-replica.ts'])
    assert.match(shown.stdout, new RegExp(`^src/services/${file}\\s+\\d+\\.\\d%`, 'm'));
  assert.match(shown.stdout, /^total\s+\d+\.\d%\s+\d+\/\d+\s+\d+\.\d%\s+\d+\/\d+$/m);
  // The repository's reasons file is read by default: the arms it explains are counted apart.
  assert.match(
    shown.stdout,
    /branch arm\(s\) no run took, [1-9]\d* with a reason in docs\/coverage-reasons\.txt, \d+ listed there as gaps; \d+ with neither, \d+ on error paths/,
  );
  assert.match(
    limbo('coverage', out, '--reasons', 'none').stdout,
    /branch arm\(s\) no run took, \d+ on error paths/,
  );
  // The fault space of the run: the leader kill met ops in flight, in a named phase.
  assert.match(shown.stdout, /^fault space over 1 run\(s\) on reference: \d+ cell\(s\) met/m);
  assert.match(shown.stdout, /^ {2}processor \(leader\)\s+kill 1$/m);
  assert.match(shown.stdout, /^ {2}kill × processor \(leader\): \S.*\(\d+\)/m);
  // Other rooms the services load are there too, under their own prefix.
  assert.match(limbo('coverage', out, '--under', 'src/protocol/').stdout, /^src\/protocol\/\S+\.ts\s/m);
});

test('limbo soak --coverage leaves coverage.json in each of its runs', () => {
  const out = join(fixtures, 'soak');
  const soak = limbo(
    'soak',
    join(fixtures, 'short-kill.ts'),
    '--seeds',
    '1',
    '--seed',
    '5',
    '--coverage',
    '--out',
    out,
  );
  assert.equal(soak.status, 0, soak.stdout + soak.stderr);
  assert.equal(findCoverageFiles([out]).length, 1);
});

test('bad input exits 2 with one line naming the problem', () => {
  let r = limbo('coverage');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^limbo coverage: name at least one run directory/);
  r = limbo('coverage', join(fixtures, 'nowhere'));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no such file or folder: .*nowhere/);
  const empty = join(fixtures, 'empty');
  mkdirSync(empty, { recursive: true });
  r = limbo('coverage', empty);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no runs under .*empty \(no coverage\.json or fault-space\.json\)/);
  r = limbo('run', join(fixtures, 'short-kill.ts'), '--coverage', '--runtime', 'docker');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--coverage needs the local runtime \(got --runtime docker\)/);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  for (const command of ['soak', 'detect']) {
    r = limbo(command, '--coverage', '--runtime', 'docker');
    assert.equal(r.status, 2, `${command}: ${r.stderr}`);
    assert.match(r.stderr, /--coverage needs the local runtime/);
  }
  assert.ok(!existsSync(join(fixtures, 'runs-docker')));
});
