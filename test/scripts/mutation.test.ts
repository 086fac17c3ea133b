// The mutation run's selection (scripts/mutation/plan.mjs) on the real source and a real
// coverage map: the same seed gives the same sample of Stryker's mutants, the sample has the
// size asked, a mutant's range makes Stryker's instrumenter place that very mutant, and the
// suites a mutant gets are those whose coverage run reached its line. The coverage map is one
// real run: ingress-processor-reset at seed 1 with --coverage.
//
// Then, only with LIMBO_MUTATION_E2E=1, one mutant judged end to end through Stryker (sandbox,
// build, judge, suite): the ingress reading the idempotency key from header "" instead of
// "idempotency-key" (what the catalogue's idempotency-key-ignored switch does), which
// ingress-processor-reset catches. It copies the checkout into Stryker's sandbox, builds it
// whole (tsc and the bundles) and runs a cluster: about a minute on an idle machine, several
// beside the other tests of `npm test`, whose own builds and clusters it would slow.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawnCaptured, type Captured } from '../helpers/limbo-cli.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Position {
  line: number;
  column: number;
}
interface Mutant {
  file: string;
  location: { start: Position; end: Position };
  mutatorName: string;
  replacement: string;
}
interface Seen {
  lines: Map<number, number>;
  fns: { start: Position; end: Position; hits: number }[];
}
type Coverage = Map<string, Map<string, Seen>>;
interface Plan {
  enumerateMutants: (root: string, files?: string[]) => Promise<Mutant[]>;
  sampleMutants: (mutants: Mutant[], size: number, seed: number) => Mutant[];
  mutantKey: (m: Mutant) => string;
  mutateRange: (m: Mutant) => string;
  loadCoverage: (dir: string) => Coverage;
  suitesFor: (m: Mutant, coverage: Coverage) => { suite: string; hits: number }[];
  originalText: (root: string, m: Mutant) => string;
}

const plan = (await import(pathToFileURL(path.join(repo, 'scripts/mutation/plan.mjs')).href)) as Plan;

function run(args: string[], env: Record<string, string> = {}, timeoutMs = 240_000): Promise<Captured> {
  return spawnCaptured(process.execPath, args, {
    cwd: repo,
    env: { LIMBO_PROMETHEUS: 'off', ...env },
    timeoutMs,
  });
}

let all: Mutant[] = [];
const coverageDir = mkdtempSync(path.join(os.tmpdir(), 'limbo-mutation-coverage-'));
before(async () => {
  all = await plan.enumerateMutants(repo);
  const r = await run([
    'bin/limbo.js',
    'run',
    'chaos/ingress-processor-reset.ts',
    '--target',
    'reference',
    '--seed',
    '1',
    '--coverage',
    '--out',
    coverageDir,
  ]);
  assert.equal(r.code, 0, r.output);
});

test('the same seed gives the same sample of the real mutants, of the size asked', () => {
  assert.ok(all.length > 1000, `${all.length} mutants of src/services`);
  assert.ok(all.every((m) => m.file.startsWith('src/services/')));
  const a = plan.sampleMutants(all, 12, 7).map(plan.mutantKey);
  const b = plan.sampleMutants(all, 12, 7).map(plan.mutantKey);
  const c = plan.sampleMutants(all, 12, 8).map(plan.mutantKey);
  assert.deepEqual(a, b);
  assert.equal(a.length, 12);
  assert.equal(new Set(a).size, 12, 'no mutant twice');
  assert.notDeepEqual(a, c, 'another seed, another sample');
  const keys = new Set(all.map(plan.mutantKey));
  assert.ok(a.every((k) => keys.has(k)));
  assert.equal(plan.sampleMutants(all.slice(0, 5), 12, 7).length, 5, 'no more than there are');
  // A larger sample at the same seed extends the smaller one (the shuffle's first draws agree).
  const larger = new Set(plan.sampleMutants(all, 40, 7).map(plan.mutantKey));
  assert.ok(a.every((k) => larger.has(k)));
});

test("a mutant's range makes Stryker's instrumenter place that mutant", async () => {
  const [m] = plan.sampleMutants(all, 1, 3);
  assert.ok(m);
  // The range as Stryker's --mutate option reads it: lines from 1, columns from 0.
  const range = /^(.*):(\d+):(\d+)-(\d+):(\d+)$/.exec(plan.mutateRange(m));
  assert.ok(range, plan.mutateRange(m));
  const [, file, sl, sc, el, ec] = range;
  assert.equal(file, m.file);
  const { Instrumenter } = (await import('@stryker-mutator/instrumenter')) as unknown as {
    Instrumenter: new (logger: unknown) => {
      instrument(
        files: unknown[],
        options: unknown,
      ): Promise<{
        mutants: {
          fileName: string;
          location: Mutant['location'];
          mutatorName: string;
          replacement: string;
        }[];
      }>;
    };
  };
  const quiet = new Proxy({}, { get: (_, name) => (String(name).startsWith('is') ? () => false : () => {}) });
  const { mutants } = await new Instrumenter(quiet).instrument(
    [
      {
        name: path.join(repo, m.file),
        content: readFileSync(path.join(repo, m.file), 'utf8'),
        mutate: [
          {
            start: { line: Number(sl) - 1, column: Number(sc) },
            end: { line: Number(el) - 1, column: Number(ec) },
          },
        ],
      },
    ],
    { plugins: null, excludedMutations: [], ignorers: [] },
  );
  const placed = mutants.map((p) => plan.mutantKey({ ...p, file: m.file }));
  assert.ok(placed.includes(plan.mutantKey(m)), `${plan.mutantKey(m)} among ${placed.join('; ')}`);
});

test("a mutant's suites are those whose coverage run reached its line, inside a function that ran", () => {
  const coverage = plan.loadCoverage(coverageDir);
  assert.deepEqual([...coverage.keys()], ['ingress-processor-reset']);
  const files = coverage.get('ingress-processor-reset')!;
  const lineHits = (m: Mutant) => files.get(m.file)?.lines.get(m.location.start.line + 1) ?? 0;
  const reached = all.filter((m) => plan.suitesFor(m, coverage).length > 0);
  const unreached = all.filter((m) => plan.suitesFor(m, coverage).length === 0);
  assert.ok(
    reached.length > 100 && unreached.length > 100,
    `${reached.length} reached, ${unreached.length} not`,
  );
  for (const m of plan.sampleMutants(reached, 20, 1)) {
    const [only, ...more] = plan.suitesFor(m, coverage);
    assert.deepEqual(more, []);
    assert.equal(only!.suite, 'ingress-processor-reset');
    assert.equal(only!.hits, lineHits(m), 'the hits of its first line');
  }
  // The ingress's request handler runs on every call of the suite's workload.
  const handler = all.find(
    (m) =>
      m.file === 'src/services/ingress/http-api.ts' &&
      m.mutatorName === 'StringLiteral' &&
      plan.originalText(repo, m) === "'idempotency-key'",
  );
  assert.ok(handler, 'the idempotency-key header literal is a mutant');
  assert.ok(plan.suitesFor(handler, coverage)[0]!.hits > 100);
  // bugSwitch() is the runner's (which switches make a target legacy); no service calls it.
  // Its declaration line ran (the module loaded), its body never did: no coverage.
  const body = all.find(
    (m) =>
      m.file === 'src/services/bugs.ts' &&
      m.mutatorName === 'BlockStatement' &&
      plan.originalText(repo, m).includes('bugSwitches.find'),
  );
  assert.ok(body, 'the body of bugSwitch is a mutant');
  assert.ok(lineHits(body) > 0, 'its first line ran');
  assert.deepEqual(plan.suitesFor(body, coverage), []);
});

test(
  'a mutant that ignores idempotency keys is killed by ingress-processor-reset, through Stryker',
  {
    skip:
      process.env.LIMBO_MUTATION_E2E !== '1' && 'a sandbox build and a cluster run: set LIMBO_MUTATION_E2E=1',
    timeout: 900_000,
  },
  async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'limbo-mutation-e2e-'));
    const r = await run(
      [
        'scripts/mutation/run.mjs',
        '--mutant',
        'src/services/ingress/http-api.ts:205:83-205:100',
        '--coverage',
        coverageDir,
        '--max-suites',
        '1',
        '--out',
        out,
      ],
      {},
      900_000,
    );
    assert.equal(r.code, 0, r.output);
    const result = JSON.parse(readFileSync(path.join(out, 'result.json'), 'utf8')) as {
      counts: Record<string, number>;
      results: { outcome: string; by?: { suite: string; exit: number } }[];
    };
    assert.deepEqual(
      result.counts,
      { killed: 1, survived: 0, timeout: 0, 'no coverage': 0, error: 0 },
      r.output,
    );
    assert.equal(result.results[0]!.by!.suite, 'ingress-processor-reset');
    assert.notEqual(result.results[0]!.by!.exit, 0);
  },
);
