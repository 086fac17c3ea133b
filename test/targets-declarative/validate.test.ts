// The declaration validator on good files (the shipped declarations) and bad ones (each names
// the bad field), and `limbo run --target <bad file>` exiting 2 with that message, and a
// readiness that never comes exiting 2 with nothing left running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDeclaration, declarationFile } from '../../src/targets/declarative/load.js';
import { DeclarationError, validateDeclaration } from '../../src/targets/declarative/validate.js';
import {
  declarativeTarget,
  missingSignalsOf,
  profileOf,
  unsupportedBy,
} from '../../src/targets/declarative/target.js';
import { UsageError } from '../../src/util/errors.js';
import { scheduleRequirements } from '../../src/faults/selectors.js';
import { followerLag } from '../../src/faults/follower-lag.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** A small sound declaration (JSON-able): one service, one client link. */
function good(): Record<string, unknown> {
  return {
    name: 'toy',
    about: 'one echo server',
    services: [
      {
        name: 'svc',
        role: 'ingress',
        command: 'sleep',
        args: ['60'],
        ports: ['http'],
        ready: { tcp: '127.0.0.1:{{port:http}}' },
      },
    ],
    links: [{ from: 'client', to: 'svc', port: 'http' }],
    client: { api: 'reference' },
  };
}

function problemsOf(x: unknown): string {
  try {
    validateDeclaration(x, 'toy.json');
  } catch (err) {
    assert.ok(err instanceof DeclarationError, String(err));
    return err.message;
  }
  assert.fail('the declaration was accepted');
}

test('the shipped declarations are sound: etcd and the reference cluster', async () => {
  const etcd = await loadDeclaration(declarationFile('etcd', root)!, { checkCommands: false });
  assert.equal(etcd.name, 'etcd');
  assert.deepEqual(
    etcd.links.map((l) => `${l.from}->${l.to}`),
    ['client->etcd-1', 'client->etcd-2', 'client->etcd-3', '*->etcd-1', '*->etcd-2', '*->etcd-3'],
  );
  const missing = missingSignalsOf(etcd);
  assert.match(missing['limbo_ingress_resends_total'] ?? '', /gateway never resends/);
  assert.equal(missing['limbo_processor_leadership_changes_total'], undefined);
  const ref = await loadDeclaration(join(root, 'targets', 'reference-declared.limbo.ts'));
  assert.equal(ref.services.length, 5);
  assert.deepEqual(missingSignalsOf(ref), {}, 'the reference serves every signal natively');
  assert.equal(validateDeclaration(good(), 'toy.json').name, 'toy');
});

test('a bad declaration names the bad field', () => {
  const unknownField = good();
  (unknownField['services'] as Record<string, unknown>[])[0]!['commnd'] = 'x';
  assert.match(problemsOf(unknownField), /services\[0\] \(svc\)\.commnd: unknown field/);

  const badGrace = good();
  (badGrace['services'] as Record<string, unknown>[])[0]!['stopGraceMs'] = -1;
  assert.match(
    problemsOf(badGrace),
    /services\[0\] \(svc\)\.stopGraceMs: must be a whole number of ms from 0 to 600000/,
  );
  const grace = good();
  (grace['services'] as Record<string, unknown>[])[0]!['stopGraceMs'] = 12_000;
  assert.equal(validateDeclaration(grace, 'toy.json').services[0]!.stopGraceMs, 12_000);

  const badLink = good();
  badLink['links'] = [
    { from: 'client', to: 'svc', port: 'http' },
    { from: 'svc', to: 'nowhere', port: 'http' },
  ];
  assert.match(problemsOf(badLink), /links\[1\]\.to: no service nowhere \(have svc\)/);

  const badPort = good();
  badPort['links'] = [{ from: 'client', to: 'svc', port: 'grpc' }];
  assert.match(problemsOf(badPort), /links\[0\]\.port: svc has no port grpc/);

  const noCommand = good();
  (noCommand['services'] as Record<string, unknown>[])[0]!['command'] = 'limbo-no-such-program-42';
  assert.match(problemsOf(noCommand), /services\[0\] \(svc\)\.command: limbo-no-such-program-42 not found/);

  const badPlaceholder = good();
  (badPlaceholder['services'] as Record<string, unknown>[])[0]!['args'] = [
    '{{link:svc->db}}',
    '{{port:x}}',
    '{{nope}}',
  ];
  const m = problemsOf(badPlaceholder);
  assert.match(m, /args\[0\]: \{\{link:svc->db\}\}: no link svc->db/);
  assert.match(m, /args\[1\]: \{\{port:x\}\}: svc has no port x/);
  assert.match(m, /args\[2\]: \{\{nope\}\} is not a placeholder/);

  const badSignal = good();
  badSignal['signals'] = { limbo_made_up: { metric: 'x' }, limbo_processor_is_leader: { metrik: 'y' } };
  assert.match(problemsOf(badSignal), /signals\.limbo_made_up: not a limbo signal/);
  assert.match(problemsOf(badSignal), /signals\.limbo_processor_is_leader: must be/);

  const badInapplicable = good();
  badInapplicable['inapplicableChecks'] = { noSuchCheck: 'x', exactlyOnce: '' };
  assert.match(problemsOf(badInapplicable), /inapplicableChecks\.noSuchCheck: not a limbo check/);
  assert.match(problemsOf(badInapplicable), /inapplicableChecks\.exactlyOnce: must be the reason/);
  const fine = good();
  fine['inapplicableChecks'] = { idempotentRetriesAgree: 'no idempotency keys' };
  assert.doesNotThrow(() => validateDeclaration(fine, 'toy.json', { checkCommands: false }));

  const badReady = good();
  (badReady['services'] as Record<string, unknown>[])[0]!['ready'] = { http: 'x', tcp: 'y' };
  assert.match(problemsOf(badReady), /ready: exactly one of http, tcp, logLine/);

  const noClient = good();
  noClient['links'] = [];
  assert.match(problemsOf(noClient), /links: declare at least one link from client/);

  const leaderless = good();
  leaderless['leadership'] = {
    http: { port: 'http', path: '/status' },
    leaderWhen: { jsonPath: 'leader', equals: 1 },
  };
  assert.match(problemsOf(leaderless), /leadership: no service has the role processor/);
});

test('suites a declaration cannot serve are named with the reason', () => {
  const d = validateDeclaration(good(), 'toy.json');
  assert.match(
    unsupportedBy(d, scheduleRequirements([{ name: 'kill', describe: 'leaderOf(0)' }])) ?? '',
    /declares no leadership/,
  );
  assert.match(
    unsupportedBy(d, scheduleRequirements([{ name: 'timeout', describe: 'ingress->processor-1' }])) ?? '',
    /no link ingress->processor-1/,
  );
  assert.match(
    unsupportedBy(d, scheduleRequirements([{ name: 'kill', describe: 'log' }])) ?? '',
    /no service log/,
  );
  assert.match(
    unsupportedBy(d, scheduleRequirements([{ name: 'kill', describe: 'randomOf(processor)' }])) ?? '',
    /no processor service/,
  );
  // follower-lag slows the followers' reads of a log service: it needs a leader, processors and
  // a service named log; this declaration has no log, so a suite using it is skipped.
  const lag = scheduleRequirements([followerLag({ partition: 0, latencyMs: 800 })]);
  assert.deepEqual(lag, [
    { kind: 'leader' },
    { kind: 'role', role: 'processor' },
    { kind: 'service', name: 'log' },
  ]);
  assert.match(unsupportedBy(d, lag.slice(2)) ?? '', /no service log/);
  assert.equal(unsupportedBy(d, scheduleRequirements([{ name: 'kill', describe: 'svc' }])), undefined);
  assert.equal(
    unsupportedBy(d, scheduleRequirements([{ name: 'latency', describe: 'client->svc' }])),
    undefined,
  );
});

function limbo(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'limbo.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** PIDs of processes whose command line contains `token`. */
function processesWith(token: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(token)) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

test('limbo run --target <bad declaration> exits 2 naming the field; a readiness that never comes exits 2 and leaves nothing running', (t) => {
  // Inside the checkout, so the suite's `import … from 'limbo'` resolves.
  mkdirSync(join(root, '.limbo'), { recursive: true });
  const dir = mkdtempSync(join(root, '.limbo', 'decl-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const suite = join(dir, 'client-latency.ts');
  writeFileSync(
    suite,
    [
      "import { at, defineSuite, latency, noClientLeftHanging } from 'limbo';",
      'export default defineSuite({',
      "  name: 'client-latency', why: 'a toy suite for a toy declaration',",
      "  schedule: [at('1s', latency('client->svc', { latencyMs: 10 }), { for: '1s' })],",
      '  expect: [noClientLeftHanging()],',
      '});',
    ].join('\n'),
  );
  const bad = good();
  bad['links'] = [{ from: 'client', to: 'ghost', port: 'http' }];
  writeFileSync(join(dir, 'bad.limbo.json'), JSON.stringify(bad));
  let r = limbo('run', suite, '--target', join(dir, 'bad.limbo.json'), '--out', dir);
  assert.equal(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /bad\.limbo\.json.*links\[0\]\.to: no service ghost/s);

  // Nothing listens on its port, so the TCP readiness never comes.
  const token = '31.4159';
  const never = good();
  (never['services'] as Record<string, unknown>[])[0]!['args'] = [token];
  never['readyTimeoutMs'] = 1500;
  writeFileSync(join(dir, 'never.limbo.json'), JSON.stringify(never));
  r = limbo('run', suite, '--target', join(dir, 'never.limbo.json'), '--out', dir);
  assert.equal(r.status, 2, r.stdout + r.stderr);
  assert.match(
    r.stderr,
    /target toy: service svc did not become ready \(a TCP connect to 127\.0\.0\.1:\d+\)/,
  );
  assert.deepEqual(processesWith(token), [], 'the service that never became ready was stopped');

  r = limbo('run', 'chaos', '--target', 'nowhere-declared');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /targets\/nowhere-declared\.limbo\.ts/);
});

test('a runtime a declaration cannot run on is refused naming the services: no image for docker, no command for local', () => {
  const toy = validateDeclaration(good(), 'toy.json');
  assert.throws(
    () => declarativeTarget(toy, { name: 'docker' }),
    (err: Error) =>
      err instanceof UsageError && /toy on --runtime docker: svc declare\(s\) no image/.test(err.message),
  );
  const imageOnly = good();
  const svc = (imageOnly['services'] as Record<string, unknown>[])[0]!;
  delete svc['command'];
  svc['image'] = 'toy:local';
  const declared = validateDeclaration(imageOnly, 'toy.json');
  assert.throws(
    () => declarativeTarget(declared, { name: 'local' }),
    (err: Error) =>
      err instanceof UsageError &&
      /svc declare\(s\) no command \(an image only: use --runtime docker\)/.test(err.message),
  );
  assert.equal(declarativeTarget(declared, { name: 'docker' }).runtime, 'docker');
  assert.equal(declarativeTarget(toy, { name: 'local' }).runtime, 'local');
});

test('declared service levels are checked and reach the profile; link kinds must be words', () => {
  const slo = { failoverMs: 4000, p99DuringFaultMs: 1500, recoveryAfterHealMs: 2000, basis: 'its timeouts' };
  const d = validateDeclaration({ ...good(), slo }, 'toy.json');
  assert.deepEqual(profileOf(d).slo, slo);
  assert.equal(profileOf(validateDeclaration(good(), 'toy.json')).slo, undefined);
  assert.match(
    problemsOf({ ...good(), slo: { failoverMs: 4000 } }),
    // both missing levels say the same: one line naming the two fields
    /must be a positive number of ms \(in slo\.p99DuringFaultMs, slo\.recoveryAfterHealMs\)/,
  );
  assert.match(problemsOf({ ...good(), slo: { ...slo, p99: 3 } }), /slo\.p99/);
  const kinds = good();
  kinds['links'] = [{ from: 'client', to: 'svc', port: 'http', kind: 'a b' }];
  assert.match(problemsOf(kinds), /links\[0\]\.kind: must be a word/);
});
