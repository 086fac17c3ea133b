// The declared leadership transfer: its templates, its failures named, its validation, and
// explore drawing transfer-leadership only on a declaration that has one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fillTransferArg, transferLeadership } from '../../src/targets/declarative/leadership-transfer.js';
import { DeclarationError, validateDeclaration } from '../../src/targets/declarative/validate.js';
import type { TemplateValues } from '../../src/targets/declarative/template.js';
import { limboSync, packageRoot } from '../helpers/limbo-cli.js';
import { listenerService } from '../helpers/toy-declaration.js';

const values = (name: string, port: number): TemplateValues => ({
  name,
  dataDir: `/data/${name}`,
  runDir: '/run',
  ports: { client: port },
  portsOf: () => undefined,
  linkAddress: () => undefined,
});

test('transfer templates: the leader and the next by name and port, the rest as the leader', () => {
  const a = values('db-1', 2001);
  const b = values('db-2', 2002);
  assert.equal(fillTransferArg('{{leader}}->{{next}}', a, b), 'db-1->db-2');
  assert.equal(
    fillTransferArg('--from={{leader:client}} --to={{ next:client }}', a, b),
    '--from=127.0.0.1:2001 --to=127.0.0.1:2002',
  );
  assert.equal(fillTransferArg('{{name}}:{{port:client}}', a, b), 'db-1:2001');
  assert.throws(() => fillTransferArg('{{next:peer}}', a, b), /db-2 has no port peer/);
});

test('a transfer whose command fails, or after which the next does not lead, is named', async () => {
  const a = values('db-1', 2001);
  const b = values('db-2', 2002);
  await assert.rejects(
    transferLeadership(
      { command: process.execPath, args: ['-e', "console.error('no such member'); process.exit(3)"] },
      a,
      b,
      process.env,
      () => Promise.resolve(true),
    ),
    /leadership transfer db-1 -> db-2 failed .*no such member/,
  );
  await assert.rejects(
    transferLeadership(
      { command: process.execPath, args: ['-e', ''], timeoutMs: 1000 },
      a,
      b,
      process.env,
      () => Promise.resolve(false),
    ),
    /exited 0 but db-2 does not lead/,
  );
  let asked = 0;
  await transferLeadership({ command: process.execPath, args: ['-e', ''] }, a, b, process.env, () =>
    Promise.resolve(++asked >= 2),
  );
  assert.equal(asked, 2, 'done once the probe names the next leader');
});

function toy(extra: Record<string, unknown>): Record<string, unknown> {
  return {
    name: 'toy-transfer',
    about: 'two listeners',
    services: [listenerService(1), listenerService(2)],
    links: [
      { from: 'client', to: 'svc-1', port: 'p' },
      { from: 'svc-1', to: 'svc-2', port: 'p' },
    ],
    client: { api: 'reference', probe: false },
    leadership: { command: 'true' },
    ...extra,
  };
}

test('a bad leadershipTransfer is named before anything starts', () => {
  const problems = (extra: Record<string, unknown>): string => {
    try {
      validateDeclaration(toy(extra), 'toy.json');
    } catch (err) {
      assert.ok(err instanceof DeclarationError, String(err));
      return err.message;
    }
    return assert.fail('accepted');
  };
  assert.match(
    problems({ leadershipTransfer: { command: 'no-such-limbo-mover' } }),
    /leadershipTransfer\.command: no-such-limbo-mover not found/,
  );
  assert.match(
    problems({ leadershipTransfer: { command: 'true', args: ['{{next:nope}}'] } }),
    /leadershipTransfer\.args: \{\{next:nope\}\}: no service has a port nope/,
  );
  assert.match(
    problems({ leadershipTransfer: { command: 'true', args: ['{{bogus}}'] } }),
    /leadershipTransfer\.args: \{\{bogus\}\} is not a placeholder/,
  );
  assert.match(
    problems({ leadershipTransfer: { command: 'true', timeoutMs: -1 } }),
    /leadershipTransfer\.timeoutMs/,
  );
  assert.match(
    problems({ leadershipTransfer: { command: 'true', to: 'x' } }),
    /leadershipTransfer\.to: unknown field/,
  );
  assert.match(
    problems({ leadership: undefined, leadershipTransfer: { command: 'true' } }),
    /leadershipTransfer: needs leadership/,
  );
  validateDeclaration(
    toy({ leadershipTransfer: { command: 'true', args: ['{{leader:p}}', '{{next}}', '{{name}}'] } }),
    'toy.json',
  );
});

test('limbo explore draws transfer-leadership only on a declaration with leadershipTransfer', (t) => {
  mkdirSync(join(packageRoot, '.limbo'), { recursive: true });
  const dir = mkdtempSync(join(packageRoot, '.limbo', 'transfer-plan-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const plan = (extra: Record<string, unknown>): string => {
    const file = join(dir, `t${Object.keys(extra).length}.limbo.json`);
    writeFileSync(file, JSON.stringify(toy(extra)));
    const r = limboSync(
      [
        'explore',
        '--target',
        file,
        '--plan',
        '--runs',
        '20',
        '--seed',
        '3',
        '--faults',
        'transfer-leadership,kill',
      ],
      60_000,
    );
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  assert.match(plan({ leadershipTransfer: { command: 'true' } }), /transfer-leadership/);
  assert.doesNotMatch(plan({}), /transfer-leadership/);
});
