// A declaration's leadership as a command (no HTTP status page, no leader metric): run for each
// processor with that service's templates; exit 0, or JSON that says so, means "I lead".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { declarativeTarget } from '../../src/targets/declarative/target.js';
import { DeclarationError, validateDeclaration } from '../../src/targets/declarative/validate.js';
import { listenerService } from '../helpers/toy-declaration.js';
import type { StartedTarget } from '../../src/targets/target.js';
import { selectServices } from '../../src/faults/selectors.js';
import { FaultError } from '../../src/faults/fault.js';
import { createRandom } from '../../src/util/random.js';

/** Two processors, each a TCP listener on its own port (node), asked who leads by `leadership`. */
function toy(leadership: Record<string, unknown>): Record<string, unknown> {
  return {
    name: 'toy',
    about: 'two listeners',
    services: [listenerService(1), listenerService(2)],
    links: [{ from: 'client', to: 'svc-1', port: 'p' }],
    client: { api: 'reference', probe: false },
    leadership,
  };
}

/** The toy started with `leadership`, `use` given it, then everything stopped and removed. */
async function withToy<T>(
  leadership: Record<string, unknown>,
  use: (started: StartedTarget) => Promise<T>,
): Promise<T> {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-lead-cmd-'));
  try {
    const started = await declarativeTarget(validateDeclaration(toy(leadership), 'toy.json')).start(
      { processors: 2, partitions: 1 },
      { runDir },
    );
    try {
      return await use(started);
    } finally {
      await started.stop();
    }
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
}

const leaderOf = (leadership: Record<string, unknown>): Promise<string | undefined> =>
  withToy(leadership, (started) => started.leaderOf(0));

test('leadership by exit status: the service whose command exits 0 leads', async () => {
  // A shell, not node: a command starting within the ask's bound on a loaded machine too.
  const lead = await leaderOf({ command: 'sh', args: ['-c', 'test "$0" = svc-2', '{{name}}'] });
  assert.equal(lead, 'svc-2');
});

test('leadership by JSON output: leaderWhen compares two paths of what the command printed', async () => {
  const lead = await leaderOf({
    command: process.execPath,
    args: [
      '-e',
      "console.log(JSON.stringify({ status: { me: process.argv[1], leader: 'svc-1:' + process.argv[2] } }))",
      '{{name}}:{{port:p}}',
      'x',
    ],
    leaderWhen: { jsonPath: 'status.leader', equals: 'svc-1:x' },
  });
  // Both print leader "svc-1:x": the first asked that says so wins, and the answer names it.
  assert.match(lead ?? '', /^svc-[12]$/);
  const none = await leaderOf({
    command: process.execPath,
    args: ['-e', 'console.log("not json")'],
    leaderWhen: { jsonPath: 'leader', equals: true },
  });
  assert.equal(none, undefined, 'output that is not JSON says nobody leads');
});

test('a bad leadership command is named: not found, args not strings, unknown port, unknown field', () => {
  const problems = (leadership: Record<string, unknown>): string => {
    try {
      validateDeclaration(toy(leadership), 'toy.json');
    } catch (err) {
      assert.ok(err instanceof DeclarationError, String(err));
      return err.message;
    }
    return assert.fail('accepted');
  };
  assert.match(
    problems({ command: 'no-such-program-limbo' }),
    /leadership\.command: no-such-program-limbo not found/,
  );
  assert.match(problems({ command: 'true', args: [1] }), /leadership\.args: must be a list of strings/);
  assert.match(
    problems({ command: 'true', args: ['{{port:nope}}'] }),
    /leadership\.args: \{\{port:nope\}\}: no service has a port nope/,
  );
  assert.match(problems({ command: 'true', timeout: 5 }), /leadership\.timeout/);
  assert.match(problems({ command: 'true', leaderWhen: { jsonPath: 'a' } }), /give equalsJsonPath or equals/);
});

test('a probe that never says "I lead" is named: a fault on leaderOf says what each service answered', async () => {
  const probe = {
    command: process.execPath,
    args: [
      '-e',
      "console.log(JSON.stringify({ cluster: { leader: 'node-' + process.argv[1] } }))",
      '{{name}}',
    ],
    leaderWhen: { jsonPath: 'cluster.leader', equals: '{{name}}' },
  };
  await withToy(probe, async (started) => {
    const why = await started.explainNoLeader?.(0);
    assert.equal(
      why,
      'asked the leadership command for partition 0: ' +
        'svc-1: exit 0, cluster.leader is "node-svc-1", leads when "svc-1"; ' +
        'svc-2: exit 0, cluster.leader is "node-svc-2", leads when "svc-2"',
    );
    const err = await selectServices(
      { target: started, toxiproxy: started.toxiproxy, random: createRandom(1) },
      { kind: 'leaderOf', partition: 0 },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof FaultError, String(err));
    assert.equal(err.message, `partition 0 has no known leader (${why})`);
  });
});

test('a leadership command that fails says its exit and last error line', async () => {
  const probe = {
    command: process.execPath,
    args: ['-e', 'console.error("connection refused"); process.exit(3)'],
  };
  assert.equal(
    await withToy(probe, (started) => started.explainNoLeader?.(0) ?? Promise.resolve(undefined)),
    'asked the leadership command for partition 0: svc-1: exit 3: connection refused; svc-2: exit 3: connection refused',
  );
});

test('a command that exits its declared noAnswerExit gave no answer (no sample), not "not me"', async () => {
  // svc-1 cannot reach its node (exit 7, declared as no answer); svc-2 answers "not me" (exit 1).
  const probe = {
    command: process.execPath,
    args: ['-e', "console.error('timed out'); process.exit(process.argv[1] === 'svc-1' ? 7 : 1)", '{{name}}'],
    noAnswerExit: 7,
  };
  assert.equal(
    await withToy(probe, (started) => started.explainNoLeader?.(0) ?? Promise.resolve(undefined)),
    'asked the leadership command for partition 0: svc-1: no answer (exit 7: timed out); svc-2: exit 1: timed out',
  );
  const problems = (noAnswerExit: unknown): string => {
    try {
      validateDeclaration(toy({ command: 'true', noAnswerExit }), 'toy.json');
    } catch (err) {
      return String(err);
    }
    return 'accepted';
  };
  assert.match(problems(0), /leadership\.noAnswerExit: must be an exit code from 1 to 255/);
  assert.match(problems('7'), /leadership\.noAnswerExit/);
  assert.equal(problems(7), 'accepted');
});
