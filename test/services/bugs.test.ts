// The bug switches and how a run selects them: names are checked, the target name carries
// them, and suites that claim a switch are documented to fail on it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { at, defineSuite, kill, noClientLeftHanging } from '../../src/index.js';
import { documentedVerdict } from '../../src/runner/run-suites.js';
import { bugNames, bugSwitches, parseBugs } from '../../src/services/bugs.js';
import { bugsOfTarget, createTarget } from '../../src/targets/registry.js';
import { UsageError } from '../../src/util/errors.js';

test('at least 12 switches across ingress, processor, log and controller', () => {
  assert.ok(bugSwitches.length >= 12);
  assert.deepEqual(
    new Set(bugSwitches.map((b) => b.role)),
    new Set(['ingress', 'processor', 'log', 'controller']),
  );
  assert.equal(new Set(bugNames).size, bugNames.length, 'names are unique');
});

test('parseBugs names an unknown switch', () => {
  assert.deepEqual([...parseBugs(['resend-storm'])], ['resend-storm']);
  assert.throws(
    () => parseBugs(['resend-storm', 'nope'], 'LIMBO_BUGS'),
    (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.match(e.message, /LIMBO_BUGS: unknown bug switch "nope"/);
      return true;
    },
  );
});

test('reference+bug:<a,b> selects switches; the seed switches run the legacy protocol', () => {
  assert.deepEqual(bugsOfTarget('reference'), []);
  assert.deepEqual(bugsOfTarget('reference+bug:resend-storm,never-resumes'), [
    'resend-storm',
    'never-resumes',
  ]);
  assert.throws(() => bugsOfTarget('reference+bug:'), UsageError);
  assert.throws(() => createTarget('reference+bug:nope'), /unknown bug switch "nope"/);
  assert.equal(createTarget('reference+bug:resend-storm').name, 'reference+bug:resend-storm');
  assert.equal(createTarget('reference+bug:resend-storm', 'docker').runtime, 'docker');
  assert.equal(createTarget('reference:legacy').name, 'reference:legacy');
});

test('a suite that catches a switch is documented to fail on it; others are either on bug targets', () => {
  const base = {
    why: 'test',
    schedule: [at('1s', kill('processor-1'), { for: '1s' })],
    expect: [noClientLeftHanging()],
  };
  const claims = defineSuite({ ...base, name: 'claims', catches: ['resend-storm'] });
  const other = defineSuite({ ...base, name: 'other' });
  assert.equal(documentedVerdict(claims, 'reference'), 'pass');
  assert.equal(documentedVerdict(claims, 'reference+bug:resend-storm'), 'fail');
  assert.equal(documentedVerdict(claims, 'reference+bug:never-resumes,resend-storm'), 'fail');
  assert.equal(documentedVerdict(other, 'reference+bug:resend-storm'), 'either');
  assert.throws(
    () => defineSuite({ ...base, name: 'bad', catches: ['nope'] }),
    /catches: unknown bug switch "nope"/,
  );
});

test('bad switch names exit 2 naming them: limbo serve --bugs, LIMBO_BUGS, limbo detect --switches', () => {
  const main = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
    [
      ['serve', 'ingress', '--log-address', '127.0.0.1:1', '--bugs', 'nope'],
      {},
      /--bugs: unknown bug switch "nope"/,
    ],
    [
      ['serve', 'processor', '--log-address', '127.0.0.1:1'],
      { LIMBO_BUGS: 'zzz' },
      /unknown bug switch "zzz"/,
    ],
    [['detect', '--switches', 'resend-storm,nah'], {}, /--switches: unknown bug switch "nah"/],
    [['run', 'chaos/startup-race.ts', '--target', 'reference+bug:foo'], {}, /unknown bug switch "foo"/],
  ];
  for (const [args, env, pattern] of cases) {
    const r = spawnSync(process.execPath, [main, ...args], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, pattern);
  }
  const help = spawnSync(process.execPath, [main, 'detect', '--help'], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--switches/);
});
