// A full garbage collection on request. V8 collects its old generation lazily: a process that
// runs suite after suite (`limbo run chaos`, explore, soak, detect) grows its heap across runs
// long after each run's data is garbage (the standard suites' runner peaked at ~700 MiB of RSS
// with ~60 MiB live after any run). One full collection before a run starts lets the run reuse
// the heap instead. `global.gc` exists only under --expose-gc; the flag set at run time makes
// `gc` available to new contexts, so the function comes from one (the main context's globals
// stay as they are). Costs a pause of ~10-80 ms, so callers do it only between runs.
import v8 from 'node:v8';
import vm from 'node:vm';

let gc: (() => void) | null | undefined;

/** Runs a full collection; false where it cannot (nothing happens then). */
export function collectGarbage(): boolean {
  if (gc === undefined) {
    try {
      const own = (globalThis as { gc?: unknown }).gc;
      if (typeof own === 'function') gc = own as () => void;
      else {
        v8.setFlagsFromString('--expose-gc');
        const fromContext: unknown = vm.runInNewContext('gc');
        gc = typeof fromContext === 'function' ? (fromContext as () => void) : null;
      }
    } catch {
      gc = null;
    }
  }
  if (gc === null) return false;
  gc();
  return true;
}
