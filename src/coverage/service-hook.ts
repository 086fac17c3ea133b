// Loaded with `node --import` into every limbo process a run with coverage starts (runtime
// env from coverageEnv): it turns on V8's precise block coverage before the process's own
// modules load, and writes what ran to $LIMBO_COVERAGE_DIR
//   - every second, as counts since the last write (V8 resets them on each take), so a
//     process killed with SIGKILL loses at most the last second of its coverage;
//   - once more when the process exits.
// Only limbo's own compiled modules are kept (the package's dist/src/, not Node's internals
// nor node_modules): a write is a few hundred KiB where Node's own NODE_V8_COVERAGE dump
// would carry every script and every source map, several MiB a second.
// The files have the shape of NODE_V8_COVERAGE's (`{ result: ScriptCoverage[] }`), so c8
// reads and merges them (coverage/convert.ts).
import { Session } from 'node:inspector';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface FunctionCoverage {
  functionName: string;
  ranges: { startOffset: number; endOffset: number; count: number }[];
  isBlockCoverage: boolean;
}
interface ScriptCoverage {
  scriptId: string;
  url: string;
  functions: FunctionCoverage[];
}

const dir = process.env['LIMBO_COVERAGE_DIR'];
/** file:// URL prefix of the package's compiled sources (this file is dist/src/coverage/…). */
const ownPrefix = pathToFileURL(fileURLToPath(new URL('..', import.meta.url))).href;

if (dir !== undefined && dir !== '') {
  mkdirSync(dir, { recursive: true });
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params: object = {}): T => {
    // The inspector answers a session on the main thread synchronously: the callback has run
    // when post returns (needed at exit, where nothing asynchronous runs any more).
    let out: T | undefined;
    let failure: Error | undefined;
    session.post(method, params, (err, res) => {
      if (err !== null) failure = err;
      else out = res as T;
    });
    if (failure !== undefined) throw failure;
    return out as T;
  };
  post('Profiler.enable');
  post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  let n = 0;
  let first = true;
  const flush = (): void => {
    const { result } = post<{ result: ScriptCoverage[] }>('Profiler.takePreciseCoverage');
    const own = result.filter(
      (s) =>
        s.url.startsWith(ownPrefix) &&
        // After the first write (which lists every function, run or not), a script none of whose
        // blocks ran since the last one adds nothing to the sums.
        (first || s.functions.some((f) => f.ranges.some((r) => r.count > 0))),
    );
    first = false;
    if (own.length === 0) return;
    const file = join(dir, `coverage-${process.pid}-${String(n++).padStart(5, '0')}.json`);
    // Written beside, then renamed: a reader (or a kill) never meets half a file.
    writeFileSync(`${file}.tmp`, JSON.stringify({ result: own }));
    renameSync(`${file}.tmp`, file);
  };
  const timer = setInterval(() => {
    try {
      flush();
    } catch {
      // A failed write (the run directory removed under a late process) loses one second only.
    }
  }, 1000);
  timer.unref();
  process.on('exit', () => {
    clearInterval(timer);
    try {
      flush();
    } catch {
      // As above: at exit nothing else can be done about it.
    }
  });
}
