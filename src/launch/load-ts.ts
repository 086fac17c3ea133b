// Imports a TypeScript module a user wrote (a chaos suite, a declared target) into this
// process, with esbuild, in this thread. The file and the relative files it imports become one
// ES module; every package it imports stays an import of that package's own file, resolved
// from the suite's folder as Node would, so `limbo` is the runner's own modules (one copy,
// one `defineSuite`; when the runner runs from its bundle, `limbo` is that bundle:
// useLibraryModule). The module goes to a private temporary folder for its import and is
// removed at once; an inline source map sends stack traces back to the .ts lines.
//
// (Not tsx: its loader runs Node's module hooks on a thread of their own, a second V8 isolate
// that holds memory in the runner for the process's life.)
//
//   suite.ts ─▶ esbuild (bundle its relative imports; packages → file:// URLs) ─▶ tmp .mjs ─▶ import()
import { mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';

const builtins = new Set(builtinModules);
const cache = new Map<string, Promise<Record<string, unknown>>>();
let loadsUnderWay = 0;
/** The library's index (dist/src/index.js, real path) and the module to import instead of it. */
let library: { index: string; module: string } | undefined;

/**
 * From now on a loaded file's package import that resolves to this installation's
 * dist/src/index.js (`limbo`) imports `url` instead: a module that exports what the
 * index does, at the same depth as dist/src/<folder>/ (the runner's bundle, cli/runner-bundle.ts).
 */
export function useLibraryModule(url: string): void {
  const index = fileURLToPath(new URL('../index.js', url));
  let real = index;
  try {
    real = realpathSync(index);
  } catch {
    // No tsc output beside the bundle: nothing resolves to it, so nothing maps.
  }
  library = { index: real, module: url };
}

/**
 * The module `file` exports. A second import of an unchanged file gives the same module; a
 * file whose text or imports do not build rejects with esbuild's message (file:line:col).
 */
export function importTypeScript(file: string): Promise<Record<string, unknown>> {
  const stat = statSync(file);
  const key = `${file}\0${stat.mtimeMs}\0${stat.size}`;
  let loaded = cache.get(key);
  if (loaded === undefined) {
    loaded = load(file);
    cache.set(key, loaded);
    loaded.catch(() => cache.delete(key));
  }
  return loaded;
}

async function load(file: string): Promise<Record<string, unknown>> {
  const esbuild = await import('esbuild');
  loadsUnderWay++;
  const dir = mkdtempSync(join(tmpdir(), 'limbo-ts-'));
  try {
    const built = await esbuild.build({
      entryPoints: [file],
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: `node${process.versions.node.split('.')[0]}`,
      // Node's own resolution: no `module` condition or field (esbuild's defaults add them).
      conditions: ['node'],
      mainFields: ['main'],
      sourcemap: 'inline',
      write: false,
      logLevel: 'silent',
      plugins: [packagesStayImports, ownImportMeta()],
    });
    const text = built.outputFiles[0]?.text;
    if (text === undefined) throw new Error('esbuild produced no output');
    const out = join(dir, basename(file).replace(/\.[cm]?[jt]sx?$/, '') + '.mjs');
    writeFileSync(out, text);
    process.setSourceMapsEnabled(true);
    return (await import(pathToFileURL(out).href)) as Record<string, unknown>;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    // esbuild's service is a child process: it goes when no load needs it (a later load
    // starts it again).
    if (--loadsUnderWay === 0) await esbuild.stop();
  }
}

/** A package import (not ./ or /) stays an import, of the file Node would load, as a file:// URL. */
const packagesStayImports: Plugin = {
  name: 'limbo-packages-stay-imports',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === INNER) return undefined;
      if (args.path.startsWith('node:') || builtins.has(args.path)) return { external: true };
      const found = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: INNER,
      });
      if (found.errors.length > 0) return { errors: found.errors };
      if (found.external || found.path === '') return { external: true };
      if (library !== undefined && found.path === library.index)
        return { path: library.module, external: true };
      return { path: pathToFileURL(found.path).href, external: true };
    });
  },
};
const INNER = Symbol('inner resolve');

/**
 * `import.meta.url` (and dirname, filename) of each bundled file stay that file's own, so a
 * path a module builds from it names the same file bundled or not (scripts/bundle-services.mjs
 * uses it too). `except`: files that keep the bundle's own (a bundle's entry that names it).
 * `relativeTo`: the folder the bundle will be in; each file's URL is then written relative to
 * the bundle's own import.meta.url, so a bundle moved with its tree still names its files
 * (filename and dirname stay where the file was built).
 */
export function ownImportMeta(options: { except?: readonly string[]; relativeTo?: string } = {}): Plugin {
  const { except = [], relativeTo } = options;
  const urlOf = (path: string): string =>
    relativeTo === undefined
      ? JSON.stringify(pathToFileURL(path).href)
      : `new URL(${JSON.stringify(relative(relativeTo, path).split(sep).join('/'))}, import.meta.url).href`;
  return {
    name: 'limbo-own-import-meta',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, async (args) => {
        if (args.path.includes('/node_modules/') || except.includes(args.path)) return undefined;
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta')) return undefined;
        const url = urlOf(args.path);
        const contents = source
          .replace(/\bimport\.meta\.url\b/g, url)
          .replace(/\bimport\.meta\.filename\b/g, JSON.stringify(args.path))
          .replace(/\bimport\.meta\.dirname\b/g, JSON.stringify(dirname(args.path)));
        const loader = (/\.[cm]?([jt]sx?)$/.exec(args.path)?.[1] ?? 'ts') as 'js' | 'jsx' | 'ts' | 'tsx';
        return { contents, loader, resolveDir: dirname(args.path) };
      });
    },
  };
}
