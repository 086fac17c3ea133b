// End to end, as a user meets it: a declared system whose faulted link carries nothing. Two
// real processes (an HTTP server the clients call, and a peer nobody dials), every link behind
// the embedded Toxiproxy, the real CLI. Latency on the idle peer link must not pass: the run
// is INCONCLUSIVE (exit 3) naming the link and its 0 bytes, however busy the clients were; the
// same suite with the latency on the link the clients use passes, its evidence the bytes its
// own proxy counted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnCaptured, type Captured } from '../helpers/limbo-cli.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

// The clients' server answers every request at once; the peer only listens.
const server = [
  "require('http').createServer((q, s) => { q.resume(); q.on('end', () => {",
  "s.writeHead(200, { 'content-type': 'application/json' }); s.end('{\"ok\":true}'); }); })",
  ".listen(Number(process.argv[1]), '127.0.0.1')",
].join('');
const peer = "require('net').createServer((c) => c.resume()).listen(Number(process.argv[1]), '127.0.0.1')";

const declaration = {
  name: 'two-nodes',
  about: 'an HTTP server the clients call, and a peer it never dials',
  services: [
    {
      name: 'node-1',
      role: 'ingress',
      command: process.execPath,
      args: ['-e', server, '{{port:http}}'],
      ports: ['http'],
      ready: { tcp: '127.0.0.1:{{port:http}}' },
    },
    {
      name: 'node-2',
      role: 'processor',
      command: process.execPath,
      args: ['-e', peer, '{{port:peer}}'],
      ports: ['peer'],
      ready: { tcp: '127.0.0.1:{{port:peer}}' },
    },
  ],
  links: [
    { from: 'client', to: 'node-1', port: 'http' },
    { from: 'node-1', to: 'node-2', port: 'peer' },
  ],
  client: { api: 'reference', probe: false },
};

function suiteOn(link: string): string {
  return [
    "import { at, defineSuite, latency, noClientLeftHanging } from 'limbo';",
    'export default defineSuite({',
    `  name: 'slow-link', why: 'every answer on one link 100 ms late for 2 s',`,
    '  workload: { concurrency: 2, mix: { call: 1 } },',
    "  warmup: '500ms', converge: '3s',",
    `  schedule: [at('500ms', latency(${JSON.stringify(link)}, { latencyMs: 100 }), { for: '2s' })],`,
    '  expect: [noClientLeftHanging()],',
    '});',
  ].join('\n');
}

function limbo(args: string[]): Promise<Captured> {
  return spawnCaptured(process.execPath, [join(root, 'bin', 'limbo.js'), ...args], {
    cwd: root,
    env: { LIMBO_PROMETHEUS: 'off' },
    timeoutMs: 120_000,
  });
}

interface Window {
  fault: string;
  target: string;
  met: boolean;
  evidence: string;
  counted: { bytes: number; connectionsOpened?: number };
}

function windowsOf(runDir: string): { verdict: string; windows: Window[] } {
  const v = JSON.parse(readFileSync(join(runDir, 'verdict.json'), 'utf8')) as {
    verdict: string;
    checks: { name: string; evidence?: { details?: { windows?: Window[] } } }[];
  };
  const check = v.checks.find((c) => c.name === 'faultsHitTraffic');
  return { verdict: v.verdict, windows: check?.evidence?.details?.windows ?? [] };
}

test('latency on a link that carries nothing is inconclusive naming it; on the used link it passes', async (t) => {
  mkdirSync(join(root, '.limbo'), { recursive: true });
  const dir = mkdtempSync(join(root, '.limbo', 'evidence-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const target = join(dir, 'two-nodes.limbo.json');
  writeFileSync(target, JSON.stringify(declaration));

  writeFileSync(join(dir, 'idle.ts'), suiteOn('node-1->node-2'));
  const idle = await limbo(['run', join(dir, 'idle.ts'), '--target', target, '--out', join(dir, 'idle')]);
  assert.equal(idle.code, 3, idle.output);
  assert.match(idle.output, /faultsHitTraffic.*latency@node-1->node-2 \(0 bytes, 0 connections opened/);
  const a = windowsOf(join(dir, 'idle', 'latest'));
  assert.equal(a.verdict, 'inconclusive');
  assert.equal(a.windows.length, 1);
  assert.deepEqual([a.windows[0]!.met, a.windows[0]!.counted.bytes], [false, 0]);

  writeFileSync(join(dir, 'used.ts'), suiteOn('client->node-1'));
  const used = await limbo(['run', join(dir, 'used.ts'), '--target', target, '--out', join(dir, 'used')]);
  const b = windowsOf(join(dir, 'used', 'latest'));
  assert.equal(b.windows.length, 1, used.output);
  assert.equal(b.windows[0]!.met, true, used.output);
  assert.ok(
    b.windows[0]!.counted.bytes > 0 || (b.windows[0]!.counted.connectionsOpened ?? 0) > 0,
    JSON.stringify(b.windows[0]),
  );
  assert.equal(used.code, 0, used.output);
  assert.equal(b.verdict, 'pass');
});
