// Loads suite files (TypeScript modules, default export a defineSuite(...)) in this thread
// (launch/load-ts.ts: esbuild, packages such as `limbo` imported as the runner's own), and seed
// files (`*.json` from `limbo explore`), from files or folders (every *.ts and *.json inside,
// sorted). Anything wrong is a UsageError naming the file.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isSeedFileName, loadSeedFile, type SeedFile } from './seed-file.js';
import { UsageError, messageOf } from '../util/errors.js';
import { importTypeScript } from '../launch/load-ts.js';
import { isSuite, type Suite } from './suite.js';

export interface LoadedSuite {
  file: string;
  suite: Suite;
  /** A seed file's data as written (its recorded failure and replay rates); absent for suite files. */
  seedFile?: SeedFile;
}

export function expandSuitePaths(paths: readonly string[], cwd = process.cwd()): string[] {
  const files: string[] = [];
  for (const p of paths) {
    const abs = resolve(cwd, p);
    if (!existsSync(abs)) throw new UsageError(`no such suite file or folder: ${p}`);
    if (statSync(abs).isDirectory()) {
      const inside = readdirSync(abs)
        .filter((f) => /\.(ts|mts|json)$/.test(f) && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
        .sort()
        .map((f) => join(abs, f));
      if (inside.length === 0) throw new UsageError(`no suite files (*.ts) or seed files (*.json) in ${p}`);
      files.push(...inside);
    } else files.push(abs);
  }
  return files;
}

export async function loadSuite(file: string): Promise<LoadedSuite> {
  if (isSeedFileName(file)) {
    const { data, suite } = loadSeedFile(file);
    return { file, suite, seedFile: data };
  }
  let mod: { default?: unknown };
  try {
    mod = await importTypeScript(file);
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`${file}: ${err.message}`, { cause: err });
    throw new UsageError(`${file}: cannot load: ${messageOf(err)}`, {
      cause: err,
    });
  }
  // A default export that is itself a module's namespace (`export { default } from …` of a
  // CommonJS file) nests the suite one level down.
  const suite = isSuite(mod.default)
    ? mod.default
    : (mod.default as { default?: unknown } | undefined)?.default;
  if (!isSuite(suite)) throw new UsageError(`${file}: the default export must be defineSuite({...})`);
  return { file, suite };
}

export async function loadSuites(paths: readonly string[], cwd?: string): Promise<LoadedSuite[]> {
  const out: LoadedSuite[] = [];
  for (const f of expandSuitePaths(paths, cwd)) out.push(await loadSuite(f));
  return out;
}
