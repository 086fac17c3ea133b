// The services' entry point: the bundle (scripts/bundle-services.mjs) when it is current,
// else the CLI; and the bundle itself runs a real service and rejects bad usage as the CLI does.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { serviceEntry, serviceEntryFiles, startProcess } from '../../src/runtime/process.js';

test('this build made a current bundle, and services start from it', () => {
  // npm test builds with npm run build (tsc, then the bundle): a build that stopped bundling
  // would leave every service on the slower unbundled start without a word.
  assert.equal(serviceEntry({}), serviceEntryFiles.bundle);
  assert.equal(serviceEntry({ LIMBO_SERVICE_BUNDLE: 'off' }), serviceEntryFiles.main);
});

test('a bundle older than the last tsc build, or none, is not used', () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-entry-'));
  try {
    const files = { main: join(dir, 'main.js'), bundle: join(dir, 'b.mjs'), buildInfo: join(dir, 'info') };
    writeFileSync(files.main, '');
    assert.equal(serviceEntry({}, files), files.main, 'no bundle');
    writeFileSync(files.bundle, '');
    assert.equal(serviceEntry({}, files), files.bundle, 'a bundle and no build info');
    writeFileSync(files.buildInfo, '');
    utimesSync(files.bundle, new Date(1_000_000), new Date(1_000_000));
    assert.equal(serviceEntry({}, files), files.main, 'tsc built after the bundle');
    utimesSync(files.bundle, new Date(), new Date(Date.now() + 1000));
    assert.equal(serviceEntry({}, files), files.bundle, 'bundled after tsc');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the bundle serves a log server and exits 2 on a bad role', async () => {
  const bad = spawnSync(process.execPath, [serviceEntryFiles.bundle, 'serve', 'no-such-role'], {
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
      serviceEntryFiles.bundle,
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
