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

/**
 * How far V8 lets the old generation grow past what the last full collection kept, in percent.
 * By default it picks 10-300 % from how fast it collects; a service keeps little (~20 MiB live,
 * flat over a run) and makes much short-lived garbage, so services sat at 2-4× their live heap.
 * 20 % measured (session 10): services' private memory during leader-down/leader-kill 312-346 →
 * 234-255 MiB in all, the same calls/s in the cluster bench. Not for the runner: its live heap
 * grows with the run (history, spans, samples), and at 20 % it paid more full collections
 * (tracing bench CPU per call +4 %) for no lower peak (188 vs 190 MiB).
 */
export const HEAP_GROWING_PERCENT = 20;

/**
 * Sets V8's old-generation growth to HEAP_GROWING_PERCENT for this process (read at every full
 * collection, so it takes effect at once) unless the process was started with its own
 * `--heap-growing-percent`. Service processes (`limbo serve`) call it first thing.
 */
export function limitHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): boolean {
  const own = (a: string): boolean =>
    a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent');
  if (execArgv.some(own) || nodeOptions.split(/\s+/).some(own)) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
