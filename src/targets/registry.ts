// Targets by name (`--target`): reference, reference:legacy and restate (the real server).
import { UsageError } from '../util/errors.js';
import { referenceTarget } from './reference.js';
import { restateTarget } from './restate/target.js';
import type { Target } from './target.js';

const registry = new Map<string, () => Target>([
  ['reference', () => referenceTarget('rpc')],
  ['reference:legacy', () => referenceTarget('legacy')],
  ['restate', () => restateTarget()],
]);

export function registerTarget(name: string, make: () => Target): void {
  if (registry.has(name)) throw new Error(`target ${name} is already registered`);
  registry.set(name, make);
}

export function targetNames(): string[] {
  return [...registry.keys()];
}

export function createTarget(name: string): Target {
  const make = registry.get(name);
  if (make === undefined) throw new UsageError(`unknown target ${name} (known: ${targetNames().join(', ')})`);
  return make();
}
