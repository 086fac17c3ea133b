// The "client left hanging" alert rules are valid and behave as their promtool unit tests
// say; the Prometheus config template is valid. Skips (with a message) only when promtool is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dashboardsDir } from '../../dashboards/src/generate.js';

const dir = dashboardsDir();
const promtool = spawnSync('promtool', ['--version'], { stdio: 'ignore', timeout: 10_000 });
const skip =
  promtool.error === undefined && promtool.status === 0
    ? false
    : 'promtool is not installed (apt-get install --no-install-recommends prometheus)';

function run(args: string[]): { status: number | null; output: string } {
  const r = spawnSync('promtool', args, { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

test('promtool check rules dashboards/alerts.yml', { skip }, () => {
  const r = run(['check', 'rules', 'alerts.yml']);
  assert.equal(r.status, 0, r.output);
  assert.match(r.output, /SUCCESS: 2 rules found/);
});

test('promtool test rules dashboards/alerts.test.yml', { skip }, () => {
  const r = run(['test', 'rules', 'alerts.test.yml']);
  assert.equal(r.status, 0, r.output);
  assert.match(r.output, /SUCCESS/);
});

test('promtool check config dashboards/prometheus.yml (the template, with its rules)', { skip }, () => {
  const r = run(['check', 'config', 'prometheus.yml']);
  assert.equal(r.status, 0, r.output);
  assert.match(r.output, /SUCCESS: 2 rules found/);
});

test('promtool test rules fails when an expected alert does not fire', { skip }, () => {
  // The same tests against a copy of the rules with the hanging bound raised out of reach:
  // proves the unit tests can fail.
  const r = spawnSync(
    'sh',
    [
      '-c',
      `set -e; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
       sed 's/oldest_pending_seconds) > 30/oldest_pending_seconds) > 3000/' alerts.yml > "$t/alerts.yml"
       cp alerts.test.yml "$t/"; cd "$t"; promtool test rules alerts.test.yml`,
    ],
    { cwd: dir, encoding: 'utf8', timeout: 60_000 },
  );
  assert.notEqual(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.match(`${r.stdout}${r.stderr}`, /LimboClientLeftHanging/);
});
