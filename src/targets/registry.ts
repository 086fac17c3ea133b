// Targets by name (`--target`) on a runtime (`--runtime`): reference and reference:legacy on
// either runtime, reference+bug:<switches> (the reference cluster with bug switches on);
// restate (the real server, from its npm binary) on the local runtime only; else a declared
// target (targets/NAME.limbo.ts or a path to one).
import type { RuntimeChoice, RuntimeName } from '../runtime/service-runtime.js';
import { bugSwitch, parseBugs, type BugName } from '../services/bugs.js';
import { UsageError } from '../util/errors.js';
import { referenceTarget } from './reference.js';
import { restateTarget } from './restate/target.js';
import type { Target } from './target.js';
import { declarationFile, loadDeclaration } from './declarative/load.js';
import { declarativeTarget } from './declarative/target.js';

type MakeTarget = (runtime: RuntimeChoice) => Target;

const registry = new Map<string, MakeTarget>([
  ['reference', (runtime) => referenceTarget('rpc', runtime)],
  ['reference:legacy', (runtime) => referenceTarget('legacy', runtime)],
  [
    'restate',
    (runtime) => {
      if (runtime.name !== 'local')
        throw new UsageError(
          `target restate runs on the local runtime only (its nodes are the npm package's binary); drop --runtime ${runtime.name}`,
        );
      return restateTarget();
    },
  ],
]);

export function registerTarget(name: string, make: MakeTarget): void {
  if (registry.has(name)) throw new Error(`target ${name} is already registered`);
  registry.set(name, make);
}

export function targetNames(): string[] {
  return [...registry.keys()];
}

/**
 * A target by registered name, else a declared one (`targets/NAME.limbo.ts`, or a path to a
 * declaration), validated before anything starts.
 */
export async function resolveTarget(
  name: string,
  runtime: RuntimeName | RuntimeChoice = 'local',
): Promise<Target> {
  const choice = typeof runtime === 'string' ? { name: runtime } : runtime;
  if (registry.has(name) || name.startsWith(BUG_TARGET_PREFIX)) return createTarget(name, choice);
  const file = declarationFile(name);
  if (file === undefined)
    throw new UsageError(
      `unknown target ${name} (known: ${targetNames().join(', ')}; or declare it in targets/${name}.limbo.ts, or give a path to a *.limbo.ts file)`,
    );
  return declarativeTarget(await loadDeclaration(file), choice);
}

/** A name that is neither registered nor a bug target: a declaration (targets/NAME.limbo.ts or a path). */
export function isDeclaredTargetName(name: string): boolean {
  return !registry.has(name) && !name.startsWith(BUG_TARGET_PREFIX);
}

/** The target `reference+bug:<name>[,<name>…]` (bug switches, src/services/bugs.ts), else undefined. */
export const BUG_TARGET_PREFIX = 'reference+bug:';

/** The bug switches a target name turns on ([] for any other target); unknown names are a UsageError. */
export function bugsOfTarget(name: string): BugName[] {
  if (!name.startsWith(BUG_TARGET_PREFIX)) return [];
  const list = name
    .slice(BUG_TARGET_PREFIX.length)
    .split(',')
    .map((s) => s.trim());
  if (list.length === 0 || list.some((s) => s === ''))
    throw new UsageError(`--target ${name}: name at least one bug switch after "${BUG_TARGET_PREFIX}"`);
  return [...parseBugs(list, `--target ${name}`)];
}

export function createTarget(name: string, runtime: RuntimeName | RuntimeChoice = 'local'): Target {
  const bugs = bugsOfTarget(name);
  if (bugs.length > 0) {
    const legacy = bugs.some((b) => bugSwitch(b).legacy === true);
    return referenceTarget(
      legacy ? 'legacy' : 'rpc',
      typeof runtime === 'string' ? { name: runtime } : runtime,
      bugs,
    );
  }
  const make = registry.get(name);
  if (make === undefined)
    throw new UsageError(
      `unknown target ${name} (known: ${targetNames().join(', ')}, ${BUG_TARGET_PREFIX}<switch>[,<switch>…])`,
    );
  return make(typeof runtime === 'string' ? { name: runtime } : runtime);
}
