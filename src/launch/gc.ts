// A full garbage collection on request. V8 collects its old generation lazily: a process that
// runs suite after suite (`limbo run chaos`, explore, soak, detect) grows its heap across runs
// long after each run's data is garbage (the standard suites' runner peaked at ~700 MiB of RSS
// with ~60 MiB live after any run). One full collection before a run starts lets the run reuse
// the heap instead. `global.gc` exists only under --expose-gc; the flag set at run time makes
// `gc` available to new contexts, so the function comes from one (the main context's globals
// stay as they are). Costs a pause of ~10-80 ms, so callers do it only between runs.
import v8 from 'node:v8';
import vm from 'node:vm';
import { PerformanceObserver } from 'node:perf_hooks';

let gc: (() => void) | null | undefined;

/**
 * Waits out one turn of the event loop. A server or socket closed just now still holds its JS
 * object (and whatever its listeners' closures reach: a whole finished testbed) until libuv's
 * close phase, which comes after the current turn: a collection started at once keeps it all.
 */
export function afterClosePhase(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

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
 * 20 % took the services' private memory under the standard suites down by about a quarter at
 * the same calls/s in the cluster bench (the figures are in the commit that chose it).
 */
export const HEAP_GROWING_PERCENT = 20;

/**
 * The runner's old-generation growth (runSuite sets it). Its live heap grows with the run
 * (history, spans, samples), and after the full collection at a run's start V8 let the heap
 * grow ~4× past the ~20 MiB it kept: a leader-pause run then went through with no full
 * collection at all, its heap as big as its data plus every bit of garbage. At 30 %, side by
 * side over leader-down, leader-kill and leader-pause (two pairs): runner peak RSS 165-168 →
 * 146-147 MiB for 3-5 % more runner CPU (18.0-18.4 → 18.9-19.0 s), the same wall time. (Once,
 * before each run's data went before the next run started, it made no difference: 188 vs 190.)
 */
export const RUNNER_HEAP_GROWING_PERCENT = 30;

/**
 * Sets V8's old-generation growth to `percent` for this process (read at every full
 * collection, so it takes effect at once) unless the process was started with its own
 * `--heap-growing-percent`. Service processes (`limbo serve`) call it first thing.
 */
export function limitHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
  percent = HEAP_GROWING_PERCENT,
): boolean {
  if (startedWith(/^--heap[-_]growing[-_]percent/, execArgv, nodeOptions)) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
  return true;
}

/** The runner's growth limit (RUNNER_HEAP_GROWING_PERCENT); setting it again changes nothing. */
export function limitRunnerHeapGrowth(): boolean {
  return limitHeapGrowth(process.execArgv, process.env.NODE_OPTIONS ?? '', RUNNER_HEAP_GROWING_PERCENT);
}

/** Whether the process was started with a V8 flag matching `flag` (on its command line or in NODE_OPTIONS). */
function startedWith(flag: RegExp, execArgv: readonly string[], nodeOptions: string): boolean {
  return execArgv.some((a) => flag.test(a)) || nodeOptions.split(/\s+/).some((a) => flag.test(a));
}

/** The young generation's cap for a runner process, per semi-space, in MiB (V8's default: 16). */
export const RUNNER_SEMI_SPACE_MIB = 4;

let youngCap: PerformanceObserver | undefined;

/**
 * Keeps V8's young generation at no more than `semiSpaceMiB` per semi-space in a process that
 * was started without a flag for it (the `limbo` command cannot pass Node flags portably).
 * `--max-semi-space-size` is read only at start, but `--semi-space-growth-factor` is read at
 * every growth: after each collection, growth is switched off once the young generation has
 * reached the cap, and on again should V8 have shrunk it below. Growth goes by doubling from
 * 1 MiB, so it stops at the cap, or one doubling past it when two growths come before one
 * check: GC entries reach the observer in batches when the event loop is busy (loading the
 * suites, it saw 5 collections at once). In the runner it held at 8 MiB per semi-space, where
 * V8 alone went to 16.
 */
export function capYoungGeneration(
  semiSpaceMiB = RUNNER_SEMI_SPACE_MIB,
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): boolean {
  if (youngCap !== undefined) return true;
  const flag = /^--(max[-_]semi[-_]space[-_]size|semi[-_]space[-_]growth[-_]factor)/;
  if (startedWith(flag, execArgv, nodeOptions)) return false;
  const capBytes = 2 * semiSpaceMiB * 1024 * 1024;
  let growing = true;
  const check = (): void => {
    const size = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
    if (growing && size >= capBytes) {
      v8.setFlagsFromString('--semi-space-growth-factor=1');
      growing = false;
    } else if (!growing && size < capBytes) {
      v8.setFlagsFromString('--semi-space-growth-factor=2');
      growing = true;
    }
  };
  youngCap = new PerformanceObserver(check);
  youngCap.observe({ entryTypes: ['gc'] });
  check();
  return true;
}
