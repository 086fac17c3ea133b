// A declaration's leadership as a command (no HTTP status page, no leader metric): run for each
// processor with that service's templates; exit 0, or JSON that says so, means "I lead".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { declarativeTarget } from '../../src/targets/declarative/target.js';
import { DeclarationError, validateDeclaration } from '../../src/targets/declarative/validate.js';

/** Two processors, each a TCP listener on its own port (node), asked who leads by `leadership`. */
function toy(leadership: Record<string, unknown>): Record<string, unknown> {
  const member = (n: number) => ({
    name: `svc-${n}`,
    role: 'processor',
    command: process.execPath,
    args: ['-e', "require('net').createServer().listen(Number(process.argv[1]), '127.0.0.1')", '{{port:p}}'],
    ports: ['p'],
    ready: { tcp: '127.0.0.1:{{port:p}}' },
  });
  return {
    name: 'toy',
    about: 'two listeners',
    services: [member(1), member(2)],
    links: [{ from: 'client', to: 'svc-1', port: 'p' }],
    client: { api: 'reference', probe: false },
    leadership,
  };
}

async function leaderOf(leadership: Record<string, unknown>): Promise<string | undefined> {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-lead-cmd-'));
  try {
    const started = await declarativeTarget(validateDeclaration(toy(leadership), 'toy.json')).start(
      { processors: 2, partitions: 1 },
      { runDir },
    );
    try {
      return await started.leaderOf(0);
    } finally {
      await started.stop();
    }
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
}

test('leadership by exit status: the service whose command exits 0 leads', async () => {
  const lead = await leaderOf({
    command: process.execPath,
    args: ['-e', "process.exit(process.argv[1] === 'svc-2' ? 0 : 1)", '{{name}}'],
  });
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
