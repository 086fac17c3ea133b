// scripts/proxy/client-suites.sh run for real: it starts `limbo proxy` on 127.0.0.1:8474,
// runs a suite against it, prints the suite's counts, stops the server and exits 1 when a
// test failed. The public suites are not in the repo (docs/proxy.md), so the suite here is a
// stand-in checkout made in a temp dir: a `jest` that calls the running server's API and
// prints jest's closing line. The counts the script prints must be the ones that line says.
// Needs port 8474 free (the public suites hard-code it): skipped when it is taken, and
// against a real server (LIMBO_TOXIPROXY_URL), since it tests limbo's own script.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const script = path.join(repo, 'scripts/proxy/client-suites.sh');
const port = 8474;

function runScript(args: string[], timeoutMs = 60_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script, ...args], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`client-suites.sh still running after ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Whether something accepts connections on 127.0.0.1:port (bounded by a 1 s timeout). */
function listening(onPort: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: onPort, timeout: 1000 });
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

const external = (process.env.LIMBO_TOXIPROXY_URL ?? '') !== '';
const portTaken = external ? false : await listening(port);
const skip = external
  ? 'tests limbo’s own script, not the server'
  : portTaken
    ? `port ${port} is taken`
    : false;

// The stand-in `jest`: proves the server is limbo (its /events extension answers), creates a
// proxy through the API and reads it back, then prints jest's closing line as MODE says.
const fakeJest = `#!/usr/bin/env node
const api = 'http://localhost:${port}';
const mode = process.env.FAKE_MODE ?? 'pass';
const version = await (await fetch(api + '/version')).json();
const events = await fetch(api + '/events');
const created = await fetch(api + '/proxies', {
  method: 'POST',
  body: JSON.stringify({ name: 'stand-in', listen: '127.0.0.1:0', upstream: '127.0.0.1:1' }),
});
const proxies = await (await fetch(api + '/proxies')).json();
const ok = version.version === '2.12.0' && events.status === 200 && created.status === 201 && 'stand-in' in proxies;
console.log('stand-in saw', JSON.stringify({ version, events: events.status, created: created.status }));
if (mode === 'silent') process.exit(0);
if (!ok || mode === 'fail') {
  console.log('Tests:       1 failed, 2 passed, 3 total');
  process.exit(1);
}
console.log('Tests:       1 skipped, 3 passed, 4 total');
`;

let tmp = '';
before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'limbo-client-suites-'));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function standIn(mode: 'pass' | 'fail' | 'silent'): Promise<string> {
  const dir = path.join(tmp, `node-${mode}`);
  await mkdir(path.join(dir, 'node_modules/.bin'), { recursive: true });
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'toxiproxy-node-client' }, null, 2));
  const jest = path.join(dir, 'node_modules/.bin/jest');
  // The mode is baked into a wrapper so that the script's own environment stays untouched.
  await writeFile(path.join(dir, 'jest.mjs'), fakeJest);
  await writeFile(jest, `#!/bin/sh\nFAKE_MODE=${mode} exec node "${path.join(dir, 'jest.mjs')}" "$@"\n`);
  await chmod(jest, 0o755);
  return dir;
}

/** The script on the node suite only, with a stand-in checkout, its logs under `logs`. */
async function runStandIn(
  mode: 'pass' | 'fail' | 'silent',
  logs: string,
): Promise<{ code: number | null; output: string }> {
  return runScript(['--only', 'node', '--node', await standIn(mode), '--logs', path.join(tmp, logs)]);
}

test('--help exits 0 and names the three checkouts', async () => {
  const r = await runScript(['--help']);
  assert.equal(r.code, 0, r.output);
  for (const word of ['LIMBO_CLIENT_NODE', 'LIMBO_CLIENT_RUBY', 'LIMBO_CLIENT_PYTHON', '--only', '8474'])
    assert.ok(r.output.includes(word), `help lacks ${word}:\n${r.output}`);
});

test('bad input exits 2 naming the problem, before any server starts', async () => {
  const notNode = path.join(tmp, 'not-node');
  await mkdir(notNode, { recursive: true });
  const cases: [string[], RegExp][] = [
    [['--only', 'node'], /no node checkout/],
    [['--only', 'node,perl'], /--only takes node, ruby and python, got "perl"/],
    [['--only', 'node', '--node', path.join(tmp, 'missing')], /is not a directory/],
    [['--only', 'node', '--node', notNode], /is not a toxiproxy-node-client checkout/],
    [['--only', 'node', '--node', notNode, '--timeout', 'soon'], /--timeout must be a whole number/],
    [['--bogus'], /unknown argument "--bogus"/],
  ];
  for (const [args, message] of cases) {
    const r = await runScript(args);
    assert.equal(r.code, 2, `${args.join(' ')}:\n${r.output}`);
    assert.match(r.output, message);
  }
});

test('a passing suite: its counts, exit 0, the server stopped after', { skip }, async () => {
  const r = await runStandIn('pass', 'l1');
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, /^node \(.*\): 3 passed, 0 failed, 1 skipped \(exit 0, /m);
  assert.match(r.output, /^client-suites: 3 passed, 0 failed, 1 skipped$/m);
  assert.equal(await listening(port), false, 'limbo proxy still listening after the script');
});

test('a failing suite: its counts and its output, exit 1', { skip }, async () => {
  const r = await runStandIn('fail', 'l2');
  assert.equal(r.code, 1, r.output);
  assert.match(r.output, /^node \(.*\): 2 passed, 1 failed, 0 skipped \(exit 1, /m);
  assert.match(r.output, /\| stand-in saw \{"version":\{"version":"2\.12\.0"\},"events":200,"created":201\}/);
  assert.match(r.output, /^client-suites: 2 passed, 1 failed, 0 skipped$/m);
  assert.equal(await listening(port), false, 'limbo proxy still listening after the script');
});

test('a suite that prints no counts fails, even with exit 0', { skip }, async () => {
  const r = await runStandIn('silent', 'l3');
  assert.equal(r.code, 1, r.output);
  assert.match(r.output, /node \(.*\): no counts in its output \(exit 0/);
});

test('port 8474 taken: exit 2, and the suite never runs', { skip }, async () => {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  try {
    const r = await runStandIn('pass', 'l4');
    assert.equal(r.code, 2, r.output);
    assert.match(r.output, /port 8474 is taken/);
    assert.doesNotMatch(r.output, /stand-in saw|passed/);
  } finally {
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  }
});
