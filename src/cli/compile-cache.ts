// V8's compile cache (Node ≥ 22.1): every `limbo` process that loads modules — the CLI, and
// a service run unbundled — reuses the bytecode of the modules it loaded before instead of
// compiling them again. The cache directory is compileCacheDir's (LIMBO_COMPILE_CACHE, or
// `off`). Node's own NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE still win (Node reads
// them first). Where the directory cannot be written (a read-only install, a container's
// image) Node says so in the returned status and nothing changes; on Node 20 the call does not
// exist and nothing changes either. (A service started from its bundle gets its bytecode from
// serve-launch.ts instead, on every Node.)
import module from 'node:module';
import { compileCacheDir } from './compile-cache-dir.js';

const enable = (module as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache;
const dir = compileCacheDir();
if (enable !== undefined && dir !== undefined) {
  try {
    enable(dir);
  } catch {
    // A cache is an optimisation: never a reason for the command to fail.
  }
}
