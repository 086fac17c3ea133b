// V8's compile cache (Node ≥ 22.1): every `limbo` process — the CLI and each service it starts
// (`limbo serve <role>`) — reuses the bytecode of the modules it loaded before instead of
// compiling them again, which is most of a service's start-up. The cache lives beside the
// checkout's modules (`node_modules/.cache/limbo-compile-cache`), not in TMPDIR, so a run's
// temp dirs stay its own; LIMBO_COMPILE_CACHE names another directory, or `off`. Node's own
// NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE still win (Node reads them first). Where
// the directory cannot be written (a read-only install, a container's image) Node says so in
// the returned status and nothing changes; on Node 20 the call does not exist and nothing
// changes either.
import module from 'node:module';
import { fileURLToPath } from 'node:url';

const enable = (module as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache;
const choice = process.env.LIMBO_COMPILE_CACHE;
if (enable !== undefined && choice !== 'off' && process.env.NODE_DISABLE_COMPILE_CACHE === undefined) {
  try {
    enable(
      choice !== undefined && choice !== ''
        ? choice
        : fileURLToPath(new URL('../../../node_modules/.cache/limbo-compile-cache', import.meta.url)),
    );
  } catch {
    // A cache is an optimisation: never a reason for the command to fail.
  }
}
