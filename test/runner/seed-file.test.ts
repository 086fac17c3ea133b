import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exploreChecks, exploreTopology, exploreWorkload } from '../../src/explore/explore.js';
import { readFileSync } from 'node:fs';
import {
  loadSeedFile,
  readSeedFile,
  recordReplayRate,
  writeSeedFile,
  type SeedFile,
} from '../../src/runner/seed-file.js';
import { loadSuites } from '../../src/runner/load-suites.js';
import { UsageError } from '../../src/util/errors.js';

const seedFile = (over: Partial<SeedFile> = {}): SeedFile => ({
  kind: 'limbo-seed',
  version: 1,
  name: 'explore-test-1',
  why: 'a test seed',
  foundOn: 'reference:legacy',
  foundAt: new Date(0).toISOString(),
  seed: 123456,
  topology: exploreTopology,
  workload: exploreWorkload,
  chaosMs: 5000,
  convergeMs: 4000,
  schedule: [{ atMs: 1000, forMs: 1500, fault: 'kill', params: { on: { kind: 'leaderOf', partition: 2 } } }],
  expect: exploreChecks(4000),
  failed: ['noClientLeftHanging'],
  expectedToFailOn: ['reference:legacy'],
  timingDependentOn: [],
  ...over,
});

test('a saved seed file loads back as a suite pinned to its seed, with its schedule and checks', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-seeds-'));
  try {
    const file = writeSeedFile(dir, seedFile());
    const [loaded] = await loadSuites([dir]);
    assert.equal(loaded?.file, file);
    const s = loaded.suite;
    assert.equal(s.name, 'explore-test-1');
    assert.equal(s.seed, 123456);
    assert.equal(s.chaosMs, 5000);
    assert.equal(s.convergeMs, 4000);
    assert.deepEqual(s.expectedToFailOn, ['reference:legacy']);
    assert.equal(s.schedule.length, 1);
    assert.equal(s.schedule[0]?.fault.name, 'kill');
    assert.equal(s.schedule[0]?.fault.describe, 'leaderOf(2)');
    assert.deepEqual(
      s.expect.map((c) => c.name),
      ['noClientLeftHanging', 'pendingDrains', 'exactlyOnce', 'idempotentRetriesAgree', 'gracefulStops'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bad seed file is a usage error naming the file and what is wrong', () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-seeds-'));
  try {
    const cases: [unknown, RegExp][] = [
      ['{not json', /cannot read seed file/],
      [{ ...seedFile(), kind: 'other' }, /not a limbo seed file/],
      [{ ...seedFile(), seed: -1 }, /seed must be an integer/],
      [
        seedFile({ schedule: [{ atMs: 0, forMs: 1, fault: 'explode', params: {} }] }),
        /bad schedule: unknown fault explode/,
      ],
      [seedFile({ expect: [{ name: 'noSuchCheck' }] }), /unknown check "noSuchCheck"/],
      [
        seedFile({ replayRates: [{ target: 'reference', reproduced: 3, runs: 2, measuredAt: 'x' }] }),
        /replayRates\[0\] must be/,
      ],
    ];
    cases.forEach(([content, pattern], i) => {
      const file = join(dir, `bad-${i}.json`);
      writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
      assert.throws(
        () => readSeedFile(file),
        (err: unknown) =>
          err instanceof UsageError && err.message.includes(file) && pattern.test(err.message),
        `case ${i}`,
      );
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a recorded replay rate is kept per target, the rest of the file unchanged, and loads back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-seeds-'));
  try {
    // A file written before replay rates existed loads as before, with none.
    const file = writeSeedFile(dir, seedFile());
    assert.equal(loadSeedFile(file).data.replayRates, undefined);
    const before = JSON.parse(readFileSync(file, 'utf8')) as SeedFile;
    recordReplayRate(file, { target: 'reference:legacy', reproduced: 2, runs: 3, measuredAt: 'then' });
    recordReplayRate(file, { target: 'reference', reproduced: 0, runs: 3, measuredAt: 'then' });
    const rates = recordReplayRate(file, {
      target: 'reference:legacy',
      reproduced: 3,
      runs: 3,
      measuredAt: 'now',
    });
    const expected = [
      { target: 'reference', reproduced: 0, runs: 3, measuredAt: 'then' },
      { target: 'reference:legacy', reproduced: 3, runs: 3, measuredAt: 'now' },
    ];
    assert.deepEqual(rates, expected);
    const after = JSON.parse(readFileSync(file, 'utf8')) as SeedFile;
    assert.deepEqual({ ...after, replayRates: undefined }, { ...before, replayRates: undefined });
    const [loaded] = await loadSuites([file]);
    assert.deepEqual(loaded?.seedFile?.replayRates, expected);
    assert.equal(loaded?.suite.seed, 123456);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
