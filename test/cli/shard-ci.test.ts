// docs/ci/limbo-sharded.yml run for real, as far as a machine without GitHub can: the matrix's
// shard step (its own shell lines) once per matrix entry, each --out laid out as
// download-artifact lays it (shards/limbo-shard-k/, without logs/), then the merge step's line.
// It fails when the matrix and the N of --shard disagree, when a shard step can fail its job,
// or when the merge step's paths do not find what the shard steps wrote.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { packageRoot } from '../helpers/limbo-cli.js';

const workflow = readFileSync(join(packageRoot, 'docs', 'ci', 'limbo-sharded.yml'), 'utf8');

/** The shell of the step whose name starts with `name` (a `run: |` block or a one-line `run:`). */
function stepShell(name: string): string {
  const lines = workflow.split('\n');
  const at = lines.findIndex((l) => l.trimStart().startsWith(`- name: ${name}`));
  assert.ok(at >= 0, `a step named ${name}`);
  const runAt = lines.findIndex((l, i) => i > at && /^\s+run:/.test(l));
  const run = lines[runAt]!;
  if (!run.trimEnd().endsWith('|')) return run.replace(/^\s+run:\s*/, '');
  const indent = /^\s*/.exec(lines[runAt + 1]!)![0].length;
  const body: string[] = [];
  for (
    let i = runAt + 1;
    i < lines.length && /^\s*/.exec(lines[i]!)![0].length >= indent && lines[i]!.trim() !== '';
    i++
  )
    body.push(lines[i]!.slice(indent));
  return body.join('\n');
}

mkdirSync(join(packageRoot, '.limbo'), { recursive: true });
const work = mkdtempSync(join(packageRoot, '.limbo', 'shard-ci-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const suites = join(work, 'suites');
mkdirSync(suites);
for (const n of ['a', 'b', 'c'])
  writeFileSync(
    join(suites, `skipped-${n}.ts`),
    `import { defineSuite, noClientLeftHanging } from 'limbo';
export default defineSuite({ name: 'ci-skipped-${n}', why: 'costs nothing', schedule: [], expect: [noClientLeftHanging()],
  skipOn: { 'reference:legacy': 'the CI recipe test skips it' } });
`,
  );
writeFileSync(
  join(suites, 'short.ts'),
  `import { defineSuite, noClientLeftHanging } from 'limbo';
export default defineSuite({ name: 'ci-short', why: 'one real run', topology: { processors: 1, partitions: 1 },
  workload: { concurrency: 2 }, warmup: '500ms', chaos: '1s', converge: '3s', schedule: [], expect: [noClientLeftHanging()],
  timingDependentOn: ['reference:legacy'] });
`,
);

test('the sharded CI workflow: every matrix shard runs its part, the merge finds them all', () => {
  const matrix = /^\s+shard: \[([\d, ]+)\]/m.exec(workflow)?.[1]?.split(',').map(Number);
  assert.ok(matrix !== undefined, 'a shard matrix');
  const shardStep = stepShell('Run shard');
  const n = Number(/--shard \$\{\{ matrix\.shard \}\}\/(\d+)/.exec(shardStep)?.[1]);
  assert.deepEqual(
    matrix,
    Array.from({ length: n }, (_, i) => i + 1),
    'the matrix lists 1..N of --shard k/N',
  );

  const limbo = `node ${join(packageRoot, 'bin', 'limbo.js')}`;
  const env = { ...process.env, LIMBO_SEED: '5', LIMBO_TARGET: 'reference:legacy' };
  for (const k of matrix) {
    const shell = shardStep
      .replaceAll('${{ matrix.shard }}', String(k))
      .replace('npx limbo', limbo)
      .replace(' chaos ', ` ${suites} `);
    const r = spawnSync('bash', ['-euo', 'pipefail', '-c', shell], {
      cwd: work,
      env,
      encoding: 'utf8',
      timeout: 240_000,
    });
    assert.equal(r.status, 0, `the shard step of ${k}/${n} does not fail its job: ${r.stdout}${r.stderr}`);
    // download-artifact: each artifact into shards/<its name>/, what the upload excluded left out.
    const artifact = /name: (limbo-shard-)\$\{\{ matrix\.shard \}\}/.exec(workflow)?.[1];
    assert.ok(artifact !== undefined);
    cpSync(join(work, `shard-${k}`), join(work, 'shards', `${artifact}${k}`), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (src) => !['logs', 'prometheus'].includes(basename(src)),
    });
  }
  const merge = stepShell('limbo merge').replace('npx limbo', limbo);
  const r = spawnSync('bash', ['-euo', 'pipefail', '-c', merge], {
    cwd: work,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  // --expect-documented: three suites skipped as documented, one whose verdict on the legacy
  // protocol is documented as timing-dependent.
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /every verdict is the documented one for reference:legacy/);
  assert.match(
    r.stdout,
    new RegExp(`merging ${n} shard\\(s\\) of limbo run on reference:legacy, seed 5, 4 item`),
  );
  const index = readFileSync(join(work, 'merged', 'index.html'), 'utf8');
  const link = /href="([^"]+report\.html)"/.exec(index)?.[1];
  assert.ok(link !== undefined && existsSync(join(work, 'merged', link)), index);
});
