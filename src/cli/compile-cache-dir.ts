// Where limbo keeps compiled bytecode: LIMBO_COMPILE_CACHE names a directory, `off` (or Node's
// own NODE_DISABLE_COMPILE_CACHE) keeps none, and by default it lives beside the checkout's
// modules (`node_modules/.cache/limbo-compile-cache`), not in TMPDIR, so a run's temp dirs stay
// its own. Node's compile cache (compile-cache.ts) and the services' bytecode
// (serve-launch.ts) both use it.
import { fileURLToPath } from 'node:url';

/** The cache directory for this environment, or undefined when caching is off. */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const choice = env.LIMBO_COMPILE_CACHE;
  if (choice === 'off' || env.NODE_DISABLE_COMPILE_CACHE !== undefined) return undefined;
  return choice !== undefined && choice !== ''
    ? choice
    : fileURLToPath(new URL('../../../node_modules/.cache/limbo-compile-cache', import.meta.url));
}
