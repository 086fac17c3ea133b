// Leadership signals from the declared leadership probe, for a system with no leader metric:
// two real processes answer the probe with what a tiny HTTP server in this test says (who
// leads), the signal bridge serves is-leader per service and the changes counter, and a real
// `limbo run` with a declared transfer sees leadershipChanged run (not skipped) and pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { declarativeTarget } from '../../src/targets/declarative/target.js';
import { validateDeclaration } from '../../src/targets/declarative/validate.js';
import { scrape } from '../../src/telemetry/prom-text.js';
import { waitFor } from '../../src/util/wait.js';
import { limboAsync, packageRoot, type Captured } from '../helpers/limbo-cli.js';

/** `limbo …args` in a child process, without blocking this one (its control server must answer). */
const limbo = (args: string[], timeoutMs: number): Promise<Captured> => limboAsync(args, { timeoutMs });

/** Who leads, as this test says: GET / answers it, POST /lead?name=X changes it. */
async function startControl(first: string): Promise<{ url: string; leader: string; server: Server }> {
  const state = { url: '', leader: first, server: undefined as unknown as Server };
  state.server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && u.pathname === '/lead') state.leader = u.searchParams.get('name') ?? '';
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ leader: state.leader }));
  });
  await new Promise<void>((r) => state.server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  return state;
}

// A service: /status answers {me, leader} with the leader the control server names; anything
// else (the clients' calls) answers 200 at once.
const node = [
  'const [port, me, control] = process.argv.slice(1);',
  "require('http').createServer((q, s) => { q.resume(); q.on('end', async () => {",
  "  if (q.url === '/status') { const { leader } = await (await fetch(control)).json();",
  "    s.writeHead(200, { 'content-type': 'application/json' }); return s.end(JSON.stringify({ me, leader })); }",
  "  s.writeHead(200, { 'content-type': 'application/json' }); s.end('{\"ok\":true}'); }); })",
  ".listen(Number(port), '127.0.0.1');",
].join('\n');

function declaration(control: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const svc = (n: number) => ({
    name: `svc-${n}`,
    role: 'processor',
    command: process.execPath,
    args: ['-e', node, '{{port:http}}', '{{name}}', control],
    ports: ['http'],
    ready: { tcp: '127.0.0.1:{{port:http}}' },
  });
  return {
    name: 'toy-leaders',
    about: 'two processes that say who leads as the test tells them',
    services: [svc(1), svc(2)],
    links: [
      { from: 'client', to: 'svc-1', port: 'http' },
      { from: 'client', to: 'svc-2', port: 'http' },
    ],
    client: { api: 'reference', probe: false },
    leadership: {
      http: { port: 'http', path: '/status' },
      leaderWhen: { jsonPath: 'leader', equalsJsonPath: 'me' },
    },
    ...extra,
  };
}

const valueOf = (
  samples: { name: string; labels: Record<string, string>; value: number }[],
  name: string,
  labels: Record<string, string>,
) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

test('the leadership probe feeds is-leader per service and counts a change of leader', async (t) => {
  const control = await startControl('svc-1');
  t.after(() => control.server.close());
  const runDir = mkdtempSync(join(packageRoot, '.limbo-lead-signals-'));
  t.after(() => rmSync(runDir, { recursive: true, force: true }));
  const d = validateDeclaration(declaration(control.url), 'toy.json');
  const target = declarativeTarget(d);
  assert.deepEqual(
    Object.keys(target.profile!.missingSignals).filter((n) => /is_leader|leadership_changes/.test(n)),
    [],
    'the two leadership signals are not missing',
  );
  const started = await target.start({ processors: 2, partitions: 1 }, { runDir });
  t.after(() => started.stop());
  const url = started.extraMetricsUrls()['signals'];
  assert.ok(url !== undefined, 'the bridge serves the derived signals');
  const read = () => scrape(url, 1000);

  const first = await waitFor(
    async () => {
      const s = await read();
      return valueOf(s, 'limbo_processor_is_leader', { node: 'svc-1', partition: '0' }) === 1 ? s : undefined;
    },
    { what: 'svc-1 shown leading', timeoutMs: 10_000 },
  );
  assert.equal(valueOf(first, 'limbo_processor_is_leader', { node: 'svc-2', partition: '0' }), 0);
  assert.equal(valueOf(first, 'limbo_processor_leadership_changes_total', { partition: '0' }), 0);
  assert.equal(await started.leaderOf(0), 'svc-1');

  control.leader = 'svc-2';
  const after = await waitFor(
    async () => {
      const s = await read();
      return valueOf(s, 'limbo_processor_is_leader', { node: 'svc-2', partition: '0' }) === 1 ? s : undefined;
    },
    { what: 'svc-2 shown leading', timeoutMs: 10_000 },
  );
  assert.equal(valueOf(after, 'limbo_processor_is_leader', { node: 'svc-1', partition: '0' }), 0);
  assert.equal(valueOf(after, 'limbo_processor_leadership_changes_total', { partition: '0' }), 1);
  assert.equal(await started.leaderOf(0), 'svc-2');

  // A leader that stops answering (killed) gets no sample: it does not lead on in the signals.
  await started.services.get('svc-2')!.kill();
  const gone = await waitFor(
    async () => {
      const s = await read();
      return valueOf(s, 'limbo_processor_is_leader', { node: 'svc-2' }) === undefined ? s : undefined;
    },
    { what: 'svc-2 without a sample once killed', timeoutMs: 10_000 },
  );
  assert.equal(valueOf(gone, 'limbo_processor_is_leader', { node: 'svc-1' }), 0);
});

test('limbo run: a declared transfer moves leadership, leadershipChanged runs and passes', async (t) => {
  const control = await startControl('svc-1');
  t.after(() => control.server.close());
  mkdirSync(join(packageRoot, '.limbo'), { recursive: true });
  const dir = mkdtempSync(join(packageRoot, '.limbo', 'lead-signals-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const transfer = {
    command: process.execPath,
    args: [
      '-e',
      "fetch(process.argv[1] + '/lead?name=' + process.argv[2], { method: 'POST' }).then((r) => process.exit(r.ok ? 0 : 1))",
      control.url,
      '{{next}}',
    ],
  };
  writeFileSync(
    join(dir, 'toy.limbo.json'),
    JSON.stringify(declaration(control.url, { leadershipTransfer: transfer })),
  );
  writeFileSync(
    join(dir, 'transfer.ts'),
    [
      "import { at, defineSuite, leadershipChanged, partitionLeadership, transferLeadership } from 'limbo';",
      'export default defineSuite({',
      "  name: 'toy-transfer', why: 'leadership moves on purpose; the signals must show it',",
      '  workload: { concurrency: 1, mix: { call: 1 } },',
      "  warmup: '1s', converge: '2s',",
      "  schedule: [at('500ms', transferLeadership({ partition: 0 }), { for: '1500ms' })],",
      '  expect: [leadershipChanged(), partitionLeadership()],',
      '});',
    ].join('\n'),
  );
  const r = await limbo(
    [
      'run',
      join(dir, 'transfer.ts'),
      '--target',
      join(dir, 'toy.limbo.json'),
      '--out',
      join(dir, 'runs'),
      '--prometheus',
      'off',
    ],
    120_000,
  );
  const output = r.output;
  assert.equal(control.leader, 'svc-2', `the transfer command moved leadership:\n${output}`);
  const verdict = JSON.parse(readFileSync(join(dir, 'runs', 'latest', 'verdict.json'), 'utf8')) as {
    checks: { name: string; verdict: string; summary: string; skipped?: string }[];
  };
  const check = (name: string) => verdict.checks.find((c) => c.name === name);
  assert.equal(check('leadershipChanged')?.skipped, undefined, output);
  assert.equal(check('leadershipChanged')?.verdict, 'pass', JSON.stringify(check('leadershipChanged')));
  assert.equal(check('partitionLeadership')?.verdict, 'pass', JSON.stringify(check('partitionLeadership')));
  const series = JSON.parse(readFileSync(join(dir, 'runs', 'latest', 'series.json'), 'utf8')) as unknown;
  const text = JSON.stringify(series);
  assert.match(text, /limbo_processor_is_leader/, 'is-leader is in the run signals');
  assert.match(text, /limbo_processor_leadership_changes_total/);
});
