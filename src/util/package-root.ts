// limbo's own package folder (the one with its package.json), found from this module upwards.
// A path built from a module's import.meta.url with `../` steps is wrong in the bundles: every
// module bundled into dist/src/cli/limbo.bundle.mjs has the bundle's import.meta.url, so
// `./endpoint-main.js` of dist/src/targets/restate/ became dist/src/cli/endpoint-main.js. A file
// that belongs to a module's folder is named from the package root instead (distFile).
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let found: string | undefined;

function isLimboPackage(dir: string): boolean {
  const file = join(dir, 'package.json');
  if (basename(dir) === 'dist' || !existsSync(file)) return false;
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'limbo';
  } catch {
    return false;
  }
}

/** The folder of limbo's package.json above `from` (this module by default; cached for it). */
export function packageRoot(from: string = import.meta.url): string {
  const useCache = from === import.meta.url;
  if (useCache && found !== undefined) return found;
  const start = dirname(fileURLToPath(from));
  let dir = start;
  // Bounded by the depth of the path: each step goes one folder up until the root.
  for (;;) {
    if (isLimboPackage(dir)) {
      if (useCache) found = dir;
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`limbo's package.json not found in ${start} or above it`);
    dir = up;
  }
}

/** A file of the tsc output by its path under dist/, e.g. `src/targets/restate/endpoint-main.js`. */
export function distFile(path: string): string {
  return join(packageRoot(), 'dist', path);
}
