// Coverage of the processes a run starts, on real service processes: the hook writes its
// counts every second (so a SIGKILL keeps all but the last second) and at a clean exit;
// convertRunCoverage maps them through the source maps to src/**.ts and removes the raw files.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import libCoverage from 'istanbul-lib-coverage';
import { convertRunCoverage, coverageEnv, rawCoverageDir } from '../../src/coverage/collect.js';
import { runFiles } from '../../src/run-data/files.js';
import { startLimboService } from '../../src/runtime/process.js';

const logArgs = (dir: string): string[] => [
  '--port',
  '0',
  '--metrics-port',
  '0',
  '--data-dir',
  join(dir, 'data'),
];

function coverageOf(runDir: string): libCoverage.CoverageMap {
  return libCoverage.createCoverageMap(
    JSON.parse(readFileSync(join(runDir, runFiles.coverage), 'utf8')) as libCoverage.CoverageMapData,
  );
}

/** Statement hits of the first statement on `line` of `file` (undefined: no statement there). */
function hitsOnLine(map: libCoverage.CoverageMap, file: string, match: RegExp): number {
  const source = readFileSync(file, 'utf8').split('\n');
  const line = source.findIndex((l) => match.test(l)) + 1;
  assert.ok(line > 0, `${String(match)} in ${file}`);
  const fc = map.fileCoverageFor(file).toJSON() as libCoverage.FileCoverageData;
  const id = Object.keys(fc.statementMap).find((k) => fc.statementMap[k]!.start.line === line);
  assert.ok(id !== undefined, `a statement on ${file}:${line}`);
  return fc.s[id]!;
}

test('a service killed with SIGKILL keeps the coverage it wrote each second; the run gets coverage.json of src/', async () => {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-coverage-'));
  try {
    const log = await startLimboService('log', logArgs(runDir), {
      name: 'log',
      env: coverageEnv(process.env, runDir),
      readyTimeoutMs: 20_000,
    });
    // Two writes at least (one a second), then no chance of a clean exit.
    await sleep(2500);
    log.kill('SIGKILL');
    await log.exited;
    const raw = readdirSync(rawCoverageDir(runDir)).filter((f) => f.endsWith('.json'));
    assert.ok(raw.length >= 2, `raw files: ${raw.join(', ')}`);
    assert.ok(raw.every((f) => f.startsWith(`coverage-${log.pid}-`)));
    const files = await convertRunCoverage(runDir);
    assert.ok(files > 0);
    assert.equal(existsSync(rawCoverageDir(runDir)), false, 'the raw files are removed');
    const map = coverageOf(runDir);
    // Keyed by path from the package root, TypeScript sources only, the hook itself left out.
    assert.ok(
      map.files().every((f) => f.startsWith('src/') && f.endsWith('.ts')),
      map.files().join(', '),
    );
    assert.ok(map.files().includes('src/services/log/log-server.ts'), map.files().join(', '));
    assert.ok(!map.files().some((f) => f.startsWith('src/coverage/')));
    // What a log server does at start ran; the error thrown for a bad node name did not.
    assert.ok(hitsOnLine(map, 'src/services/log/role.ts', /startLogServer\(/) > 0);
    assert.equal(hitsOnLine(map, 'src/services/log/controller.ts', /heartbeat needs a node name/), 0);
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
});

test('a clean stop writes the last counts at exit; without the hook nothing is written and no coverage.json made', async () => {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-coverage-'));
  const plain = mkdtempSync(join(tmpdir(), 'limbo-coverage-'));
  try {
    const log = await startLimboService('log', logArgs(runDir), {
      name: 'log',
      env: coverageEnv(process.env, runDir),
      readyTimeoutMs: 20_000,
    });
    // Stopped before the first periodic write: what there is was written at exit.
    await log.stop();
    assert.ok(readdirSync(rawCoverageDir(runDir)).length >= 1);
    assert.ok((await convertRunCoverage(runDir)) > 0);
    // The graceful stop itself ran, and shows.
    const map = coverageOf(runDir);
    assert.ok(map.files().includes('src/launch/signals.ts'));

    const other = await startLimboService('log', logArgs(plain), { name: 'log' });
    await other.stop();
    assert.equal(await convertRunCoverage(plain), 0);
    assert.equal(existsSync(join(plain, runFiles.coverage)), false);
  } finally {
    rmSync(runDir, { recursive: true, force: true });
    rmSync(plain, { recursive: true, force: true });
  }
});
