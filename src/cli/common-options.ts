// Option specs shared by the commands that start a topology (`run`, `up`, `explore`), so the
// flags read and validate the same everywhere.
import { targetNames } from '../targets/registry.js';

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
