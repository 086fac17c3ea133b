// The runner's bundle (dist/src/cli/limbo.bundle.mjs, scripts/bundle-services.mjs): this build
// made a current one, `limbo` runs from it (none of the packages it bundles is loaded from
// node_modules), LIMBO_RUNNER_BUNDLE=off runs the modules instead, and a suite file the
// bundled runner loads gets the bundle's own copy of the library — what the suite registers
// is in the runner's registries, not in a second copy's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runnerEntry, runnerEntryFiles, type RunnerLibrary } from '../../src/cli/entry.js';
import { checkerNames } from '../../src/index.js';
import { findCommand } from '../../src/targets/declarative/validate.js';
import { mapStack } from '../../src/launch/stack-map.js';
import { serviceEntryFiles } from '../../src/runtime/process.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
mkdirSync(join(root, '.limbo'), { recursive: true });
const dir = mkdtempSync(join(root, '.limbo', 'runner-bundle-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

test('this build made a current runner bundle; off, stale or missing means the modules', () => {
  assert.equal(runnerEntry({}), runnerEntryFiles.bundle);
  assert.equal(runnerEntry({ LIMBO_RUNNER_BUNDLE: 'off' }), runnerEntryFiles.modules);
  const files = { bundle: join(dir, 'b.mjs'), modules: join(dir, 'm.js'), buildInfo: join(dir, 'info') };
  assert.equal(runnerEntry({}, files), files.modules, 'no bundle');
  writeFileSync(files.bundle, '');
  writeFileSync(files.buildInfo, '');
  utimesSync(files.bundle, new Date(1_000_000), new Date(1_000_000));
  assert.equal(runnerEntry({}, files), files.modules, 'tsc built after the bundle');
  utimesSync(files.bundle, new Date(), new Date(Date.now() + 1000));
  assert.equal(runnerEntry({}, files), files.bundle, 'bundled after tsc');
});

/** The packages under node_modules whose CommonJS files `limbo run --help` loaded. */
function packagesLoaded(env: NodeJS.ProcessEnv): string[] {
  // Runs before the command and reports at exit which files came from node_modules.
  const probe = `import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
process.on('exit', () => {
  const names = new Set();
  for (const k of Object.keys(require.cache)) {
    const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(k);
    if (m) names.add(m[1]);
  }
  process.stderr.write('PACKAGES ' + JSON.stringify([...names].sort()) + '\\n');
});`;
  const probeFile = join(dir, 'probe.mjs');
  writeFileSync(probeFile, probe);
  const r = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(probeFile).href, join(root, 'bin/limbo.js'), 'run', '--help'],
    { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /usage: limbo run/);
  const line = /^PACKAGES (.*)$/m.exec(r.stderr);
  assert.ok(line, r.stderr);
  return JSON.parse(line[1]!) as string[];
}

test('`limbo` runs from the bundle: grpc-js, OpenTelemetry and prom-client are not loaded from node_modules', () => {
  const bundled = packagesLoaded({});
  const modules = packagesLoaded({ LIMBO_RUNNER_BUNDLE: 'off' });
  for (const p of ['@grpc/grpc-js', 'prom-client', '@opentelemetry/core']) {
    assert.ok(modules.includes(p), `unbundled, ${p} is loaded from node_modules: ${modules.join(' ')}`);
    assert.ok(!bundled.includes(p), `bundled, ${p} is not: ${bundled.join(' ')}`);
  }
});

test('a suite loaded by the bundled runner registers into the bundle’s library, not a second copy', async () => {
  const lib = (await import(pathToFileURL(runnerEntryFiles.bundle).href)) as RunnerLibrary;
  const file = join(dir, 'registers.ts');
  writeFileSync(
    file,
    `import { defineSuite, noClientLeftHanging, registerChecker } from 'limbo';
registerChecker('fromTheSuiteFile', () => noClientLeftHanging());
export default defineSuite({ name: 'registers', why: 'registers a checker', schedule: [], expect: [noClientLeftHanging()] });
`,
  );
  const [loaded] = await lib.loadSuites([file]);
  assert.equal(loaded?.suite.name, 'registers');
  assert.ok(lib.checkerNames().includes('fromTheSuiteFile'), lib.checkerNames().join(' '));
  assert.ok(!checkerNames().includes('fromTheSuiteFile'), 'the modules’ copy saw the registration');
  // (Any copy's checkers have a check function: the registry above is what tells the copies apart.)
  assert.equal(typeof loaded?.suite.expect[0]?.check, 'function');
});

test('a stack from the bundle maps back to the TypeScript lines (the map is read only then)', async () => {
  const lib = (await import(pathToFileURL(runnerEntryFiles.bundle).href)) as RunnerLibrary;
  let stack = '';
  try {
    lib.createTarget('no-such-target');
  } catch (err) {
    stack = (err as Error).stack ?? '';
  }
  assert.match(stack, /limbo\.bundle\.mjs:\d+:\d+/, stack);
  const mapped = mapStack(stack);
  assert.doesNotMatch(mapped, /limbo\.bundle\.mjs:\d+:\d+/, mapped);
  const frame = /(\/[^\s():]+\/src\/targets\/registry\.ts):(\d+):\d+/.exec(mapped);
  assert.ok(frame, mapped);
  // The frame is the line that throws, in the TypeScript source.
  const line = readFileSync(frame[1]!, 'utf8').split('\n')[Number(frame[2]) - 1] ?? '';
  assert.match(line, /throw new UsageError/, line);
  // A stack with no bundle frames, or frames of a file without a map, is left as it is.
  const plain = 'Error: x\n    at f (/nowhere/a.bundle.mjs:1:2)\n    at g (/x/y.js:3:4)';
  assert.equal(mapStack(plain), plain);
});

test("a frame in the services' bundle maps back to its TypeScript source", () => {
  // The services' bundle is CommonJS (serve.bundle.cjs), run by serve-launch.js; its map is the same kind.
  const text = readFileSync(serviceEntryFiles.bundle, 'utf8');
  const at = text.indexOf('function startLogServer(');
  assert.ok(at > 0, 'startLogServer is in the bundle');
  const before = text.slice(0, at).split('\n');
  const frame = `    at startLogServer (${serviceEntryFiles.bundle}:${before.length}:${before[before.length - 1]!.length + 1})`;
  const mapped = mapStack(frame);
  assert.match(mapped, /\/src\/services\/log\/log-server\.ts:\d+:\d+\)$/, mapped);
});

test('each module in the bundles keeps its own import.meta.url: the files it names are the ones beside its tsc output', () => {
  // In a bundle every module shares the bundle's URL unless the build keeps each one's own:
  // the Restate target then looked for dist/src/cli/endpoint-main.js and never started.
  // The services' bundle is CommonJS: its own URL is the banner's __limboBundleUrl.
  for (const [bundle, ownUrl, pattern] of [
    [runnerEntryFiles.bundle, 'import.meta.url', /new URL\("([^"]+)",\s*import\.meta\.url\)/g],
    [serviceEntryFiles.bundle, '__limboBundleUrl', /new URL\("([^"]+)",\s*__limboBundleUrl\)/g],
  ] as const) {
    const text = readFileSync(bundle, 'utf8');
    const own = [...text.matchAll(pattern)].map((m) => m[1]!);
    assert.ok(own.length > 0, `${bundle}: no module's own URL`);
    for (const rel of own)
      assert.ok(
        existsSync(fileURLToPath(new URL(rel, pathToFileURL(bundle)))),
        `${bundle}: ${rel} is not there`,
      );
    // What is left of the bundle's own URL: the banner's require (the runner's) or definition
    // (the services'), and the runner entry's library registration.
    const bare = text.split(ownUrl).length - 1 - own.length;
    assert.equal(
      bare,
      bundle === runnerEntryFiles.bundle ? 2 : 1,
      `${bundle}: modules reading the bundle's URL`,
    );
    assert.equal(text.includes('import.meta'), bundle === runnerEntryFiles.bundle, `${bundle}: import.meta`);
  }
  assert.ok(readFileSync(runnerEntryFiles.bundle, 'utf8').includes('"../targets/restate/cluster.js"'));
});

test('the bundled runner finds its built-in declared targets from any working folder', () => {
  const elsewhere = mkdtempSync(join(tmpdir(), 'limbo-cwd-'));
  try {
    // The target resolves (targets/etcd.limbo.ts of the checkout) before the suite is looked for.
    const r = spawnSync(
      process.execPath,
      [join(root, 'bin/limbo.js'), 'run', 'no-such-suite.ts', '--target', 'etcd'],
      {
        cwd: elsewhere,
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    assert.equal(r.status, 2, r.stderr);
    assert.doesNotMatch(r.stderr, /unknown target/);
    // Without etcd on PATH the found target is refused for its missing command (naming its
    // file) before any suite is looked for; with it, the suite is what is missing.
    assert.match(
      r.stderr,
      findCommand('etcd') !== undefined
        ? /no-such-suite\.ts/
        : /targets\/etcd\.limbo\.ts:[\s\S]*etcd not found/,
    );
  } finally {
    rmSync(elsewhere, { recursive: true, force: true });
  }
});
