// Option specs shared by the commands that start a topology (`run`, `up`, `explore`), so the
// flags read and validate the same everywhere.
import { targetNames } from '../targets/registry.js';
import { UsageError } from '../util/errors.js';

export const targetOption = {
  type: 'string',
  default: 'reference',
  description: `target: ${targetNames().join(' | ')} | NAME (declared in targets/NAME.limbo.ts) | ./path/to/NAME.limbo.ts`,
} as const;

export const runtimeOption = {
  type: 'enum',
  values: ['local', 'docker'] as const,
  default: 'local',
  description: 'where services run',
} as const;

export const outOption = {
  type: 'string',
  default: 'runs',
  description: 'root of the run directories',
} as const;

export const toxiproxyUrlOption = {
  type: 'string',
  description: 'a running Toxiproxy API (default: the embedded server)',
} as const;

export const coverageOption = {
  type: 'bool',
  default: false,
  description:
    "measure the code coverage of the run's limbo processes into each run directory's coverage.json (local runtime; read them with limbo coverage)",
} as const;

/** `--coverage` is measured on the processes limbo starts itself: not inside containers. */
export function checkCoverageRuntime(coverage: boolean, runtime: string): void {
  if (coverage && runtime !== 'local')
    throw new UsageError(`--coverage needs the local runtime (got --runtime ${runtime})`);
}

export const shardOption = {
  type: 'string',
  description:
    'run only shard k of N (k/N): the items whose index in the unsharded list is k-1 mod N, with the same seeds (needs --seed); writes limbo-shard-k-of-N.json into --out for limbo merge',
} as const;

export const planOption = {
  type: 'bool',
  default: false,
  description: 'print what would run (each item with its seed, after --shard) and exit without running',
} as const;
