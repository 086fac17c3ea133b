// Code coverage of the processes a run starts (`limbo run … --coverage`):
//
//   coverageEnv ─▶ each limbo process starts with service-hook.js (node --import), unbundled
//        │          (the tsc output, whose source maps lead back to src/**.ts)
//        ▼
//   <runDir>/coverage-raw/coverage-<pid>-<n>.json   V8 block counts, one file a second a process
//        │
//   convertRunCoverage (c8: merge, map through the source maps)
//        ▼
//   <runDir>/coverage.json   istanbul's coverage map of src/**, paths relative to the package
//
// Processes that are not limbo's (Restate, etcd, a declared system's binaries) have no
// coverage here; a run of them writes no coverage.json.
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import libCoverage from 'istanbul-lib-coverage';
import { runFiles } from '../run-data/files.js';

/** The package's root (this file is dist/src/coverage/collect.js). */
export const packageRoot = fileURLToPath(new URL('../../..', import.meta.url));
const hookUrl = new URL('./service-hook.js', import.meta.url).href;

/** The raw V8 coverage of a run's processes, converted and removed when the run ends. */
export function rawCoverageDir(runDir: string): string {
  return join(runDir, 'coverage-raw');
}

/**
 * `env` for the processes of a run with coverage: the hook loaded first, writing into the
 * run's raw directory, and the services run unbundled (the bundle's one file maps back to the
 * sources less exactly, and runs from cached bytecode outside the hook's reach).
 */
export function coverageEnv(env: NodeJS.ProcessEnv, runDir: string): NodeJS.ProcessEnv {
  const nodeArgs = [env['LIMBO_SERVICE_NODE_ARGS'] ?? '', `--import=${hookUrl}`].filter((a) => a !== '');
  return {
    ...env,
    LIMBO_COVERAGE_DIR: rawCoverageDir(runDir),
    LIMBO_SERVICE_BUNDLE: 'off',
    LIMBO_SERVICE_NODE_ARGS: nodeArgs.join(' '),
  };
}

interface C8Report {
  getCoverageMapFromAllCoverageFiles(): Promise<libCoverage.CoverageMap>;
}

/**
 * Merges the run's raw coverage into `<runDir>/coverage.json` (keyed by paths relative to the
 * package, e.g. `src/services/log/server.ts`) and removes the raw files. Returns the number of
 * source files covered; 0 when no limbo process of the run wrote any (nothing is written).
 */
export async function convertRunCoverage(runDir: string): Promise<number> {
  const raw = rawCoverageDir(runDir);
  if (!existsSync(raw) || !readdirSync(raw).some((f) => f.endsWith('.json'))) {
    rmSync(raw, { recursive: true, force: true });
    return 0;
  }
  // c8 (and the reports it carries) loads only here: a run without coverage never reads it.
  const { default: c8 } = await import('c8');
  const report = new c8.Report({
    tempDirectory: raw,
    reporter: [],
    include: [join(packageRoot, 'dist', 'src', '**')],
    exclude: [join(packageRoot, 'dist', 'src', 'coverage', '**')],
    allowExternal: true,
    excludeNodeModules: true,
    src: [packageRoot],
  }) as unknown as C8Report;
  const map = await report.getCoverageMapFromAllCoverageFiles();
  const out = libCoverage.createCoverageMap({});
  for (const file of map.files()) {
    const rel = relative(packageRoot, file).split(sep).join('/');
    if (!rel.startsWith('src/')) continue;
    out.addFileCoverage({
      ...(map.fileCoverageFor(file).toJSON() as libCoverage.FileCoverageData),
      path: rel,
    });
  }
  writeFileSync(join(runDir, runFiles.coverage), JSON.stringify(out.toJSON()));
  rmSync(raw, { recursive: true, force: true });
  return out.files().length;
}
