// The services' entry point: the launcher of the bundle (scripts/bundle-services.mjs) when
// the bundle is current, else the CLI; the launcher runs a real service and rejects bad usage
// as the CLI does, and runs it from bytecode it wrote on an earlier start (serve-launch.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  serviceEntry,
  serviceEntryFiles,
  serviceNodeFlags,
  startLimboService,
  startProcess,
} from '../../src/runtime/process.js';

test('this build made a current bundle, and services start from it', () => {
  // npm test builds with npm run build (tsc, then the bundle): a build that stopped bundling
  // would leave every service on the slower unbundled start without a word.
  assert.equal(serviceEntry({}), serviceEntryFiles.launcher);
  assert.equal(serviceEntry({ LIMBO_SERVICE_BUNDLE: 'off' }), serviceEntryFiles.main);
});

test('a bundle older than the last tsc build, or none, is not used', () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-entry-'));
  try {
    const files = {
      main: join(dir, 'main.js'),
      bundle: join(dir, 'b.cjs'),
      launcher: join(dir, 'launch.js'),
      buildInfo: join(dir, 'info'),
    };
    writeFileSync(files.main, '');
    assert.equal(serviceEntry({}, files), files.main, 'no bundle');
    writeFileSync(files.bundle, '');
    assert.equal(serviceEntry({}, files), files.launcher, 'a bundle and no build info');
    writeFileSync(files.buildInfo, '');
    utimesSync(files.bundle, new Date(1_000_000), new Date(1_000_000));
    assert.equal(serviceEntry({}, files), files.main, 'tsc built after the bundle');
    utimesSync(files.bundle, new Date(), new Date(Date.now() + 1000));
    assert.equal(serviceEntry({}, files), files.launcher, 'bundled after tsc');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the bundle serves a log server and exits 2 on a bad role', async () => {
  const bad = spawnSync(process.execPath, [serviceEntryFiles.launcher, 'serve', 'no-such-role'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /unknown role "no-such-role"/);
  const dataDir = mkdtempSync(join(tmpdir(), 'limbo-entry-log-'));
  const log = await startProcess({
    name: 'bundled-log',
    command: process.execPath,
    args: [
      serviceEntryFiles.launcher,
      'serve',
      'log',
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--data-dir',
      dataDir,
    ],
    readyTimeoutMs: 20_000,
  });
  try {
    const metrics = await (
      await fetch(String(log.ready.addresses.metrics), { signal: AbortSignal.timeout(5000) })
    ).text();
    assert.match(metrics, /^limbo_log_/m);
  } finally {
    await log.stop(5000);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a service runs with the services' Node flags and malloc setting, and a caller's own env wins", async () => {
  const environOf = (pid: number): Map<string, string> =>
    new Map(
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .filter((e) => e.includes('='))
        .map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
    );
  const dataDir = mkdtempSync(join(tmpdir(), 'limbo-entry-env-'));
  const start = (env: NodeJS.ProcessEnv, dir: string) =>
    startLimboService('log', ['--port', '0', '--metrics-port', '0', '--data-dir', join(dataDir, dir)], {
      env,
      readyTimeoutMs: 20_000,
    });
  const plain = { ...process.env };
  delete plain.MALLOC_ARENA_MAX;
  const a = await start(plain, 'a');
  try {
    assert.equal(environOf(a.pid).get('MALLOC_ARENA_MAX'), '1');
    const cmdline = readFileSync(`/proc/${a.pid}/cmdline`, 'utf8').split('\0');
    for (const flag of serviceNodeFlags) assert.ok(cmdline.includes(flag), `${flag} in ${cmdline.join(' ')}`);
  } finally {
    await a.stop(5000);
  }
  const b = await start({ ...plain, MALLOC_ARENA_MAX: '4' }, 'b');
  try {
    assert.equal(environOf(b.pid).get('MALLOC_ARENA_MAX'), '4');
  } finally {
    await b.stop(5000);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
