// Loads suite files (TypeScript modules, default export a defineSuite(...)) with tsx, and seed
// files (`*.json` from `limbo explore`), from files or folders (every *.ts and *.json inside,
// sorted). Anything wrong is a UsageError naming the file.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isSeedFileName, readSeedFile } from './seed-file.js';
import { UsageError, messageOf } from '../util/errors.js';
import { isSuite, type Suite } from './suite.js';

export interface LoadedSuite {
  file: string;
  suite: Suite;
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

let tsxRegistered: Promise<void> | undefined;

/**
 * tsx's loader, registered once for the process: suite files then load as plain imports, and
 * the `limbo` they import is the runner's own modules. (`tsImport` per file gave each suite
 * a namespace of its own, so each loaded a fresh copy of the whole library, ~7 MiB of RSS
 * apiece, and added one more loader hook to every import after it.) tsx is loaded only here,
 * so `limbo serve` (e.g. in the services image, which ships without it) never needs it.
 */
function registerTsx(): Promise<void> {
  return (tsxRegistered ??= import('tsx/esm/api').then(({ register }) => {
    register();
  }));
}

export async function loadSuite(file: string): Promise<LoadedSuite> {
  if (isSeedFileName(file)) return { file, suite: readSeedFile(file) };
  let mod: { default?: unknown };
  try {
    await registerTsx();
    mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`${file}: ${err.message}`, { cause: err });
    throw new UsageError(`${file}: cannot load: ${messageOf(err)}`, {
      cause: err,
    });
  }
  // A file tsx loads as CommonJS (a package without "type": "module") nests its default export.
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
