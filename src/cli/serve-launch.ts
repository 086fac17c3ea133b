// The services' entry point while their bundle is current (runtime/process.ts serviceEntry):
// it runs `serve.bundle.cjs` (serve-main and all it loads, one CommonJS file) from V8 bytecode
// this machine compiled for it before, on any Node. Compiling the bundle and the functions a
// service calls on its way to ready is about a third of a service's start-up CPU; five start
// side by side on a topology's start, and again on every restart a fault makes.
//
//   argv: serve <role> … ─▶ <cache dir>/serve-<role>-<Node+flags>-<bundle's size+hash>.bin
//        ├─ there and V8 takes it ─▶ vm.Script(bundle, cachedData) ─▶ run
//        └─ none, or V8 refuses it ─▶ compile and run; once the service has started (2 s
//           later), write the bytecode V8 has by then — the bundle's own and every function
//           it ran — and remove the same role's bytecode of older bundles
//
// The bytecode is written after the start-up, not at compile time (as Node's compile cache
// does), so it holds the functions compiled lazily on the way to ready too: one log service
// to ready ran ~25 % fewer instructions with it, and only ~13 % fewer with bytecode written at
// compile time (callgrind, Node 20). V8 checks its version, flags and the source's length
// before using bytecode; the file name adds a hash of the bundle's content, so a rebuilt
// bundle of the same length never runs an older build's code, and the Node flags (command line and
// NODE_OPTIONS), so services started with other flags keep bytecode of their own. The
// services' heap-growth flag is set before compiling (serve-main sets the same again), since
// bytecode is taken only under the flags it was made with. A missing, unreadable or
// unwritable cache only costs the compile.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { limitHeapGrowth } from '../launch/gc.js';
import { compileCacheDir } from './compile-cache-dir.js';

/** How long after the start the bytecode is written: a service is ready well within it. */
const BYTECODE_WRITE_DELAY_MS = 2000;

const bundle = fileURLToPath(new URL('serve.bundle.cjs', import.meta.url));

interface BytecodeFile {
  dir: string;
  /** The file's name in `dir`. */
  name: string;
  /** What the same role's files of other bundles share with it. */
  prefix: string;
}

/** The bytecode file for this process. */
function bytecodeFile(dir: string, argv: readonly string[], source: Buffer): BytecodeFile {
  const role = argv[2] === 'serve' ? (argv[3] ?? '').replace(/[^a-z0-9-]/gi, '').slice(0, 32) : '';
  const config = createHash('sha256')
    .update(JSON.stringify([process.version, process.arch, process.execArgv, process.env.NODE_OPTIONS ?? '']))
    .digest('hex')
    .slice(0, 12);
  // The bundle's content (~2 ms to hash), not its mtime: a rebuild that changes nothing (npx in
  // a fresh clone runs the package's prepare) keeps its bytecode.
  const content = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const prefix = `serve-${role || 'other'}-${config}-`;
  return { dir, name: `${prefix}${source.length}-${content}.bin`, prefix };
}

function readOrUndefined(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

function writeBytecode(script: vm.Script, { dir, name, prefix }: BytecodeFile): void {
  try {
    mkdirSync(dir, { recursive: true });
    // Services of one role start side by side: each writes its own file and renames it into place.
    const file = join(dir, name);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, script.createCachedData());
    renameSync(tmp, file);
    for (const other of readdirSync(dir))
      if (other.startsWith(prefix) && other !== name && !other.endsWith('.tmp'))
        rmSync(join(dir, other), { force: true });
  } catch {
    // A cache is an optimisation: never a reason for a service to fail.
  }
}

limitHeapGrowth();
const dir = compileCacheDir();
const source = readFileSync(bundle);
const target = dir !== undefined ? bytecodeFile(dir, process.argv, source) : undefined;
const cachedData = target !== undefined ? readOrUndefined(join(target.dir, target.name)) : undefined;
const script = new vm.Script(Module.wrap(source.toString('utf8')), {
  filename: bundle,
  ...(cachedData !== undefined ? { cachedData } : {}),
});
if (target !== undefined && (cachedData === undefined || script.cachedDataRejected === true))
  setTimeout(() => writeBytecode(script, target), BYTECODE_WRITE_DELAY_MS).unref();
const run = script.runInThisContext() as (
  exports: object,
  require: NodeJS.Require,
  module: { exports: object },
  filename: string,
  dirname: string,
) => void;
const module = { exports: {} };
run.call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
