// Typed options from flags and LIMBO_* environment variables, parsed once.
//
//   argv --data-dir X / --data-dir=X  ─┐
//   env  LIMBO_DATA_DIR=X              ├─▶ validate ─▶ typed object (or UsageError naming the option)
//   spec default                      ─┘
// Flags win over the environment; the environment wins over defaults.
import { UsageError } from './errors.js';

interface BaseSpec {
  /** Shown by --help. */
  description: string;
  /** Overrides the derived LIMBO_<NAME> variable; `false` disables the env form. */
  env?: string | false;
}
export interface IntSpec extends BaseSpec {
  type: 'int';
  default?: number;
  min?: number;
  max?: number;
}
export interface StringSpec extends BaseSpec {
  type: 'string';
  default?: string;
}
export interface BoolSpec extends BaseSpec {
  type: 'bool';
  default?: boolean;
}
export interface EnumSpec<V extends string = string> extends BaseSpec {
  type: 'enum';
  values: readonly V[];
  default?: V;
}
export interface ListSpec extends BaseSpec {
  type: 'list';
  default?: string[];
}
export type OptionSpec = IntSpec | StringSpec | BoolSpec | EnumSpec | ListSpec;
export type OptionSpecs = Record<string, OptionSpec>;

type ValueOf<S extends OptionSpec> = S extends IntSpec
  ? number
  : S extends BoolSpec
    ? boolean
    : S extends { type: 'enum'; values: readonly (infer V)[] }
      ? V
      : S extends ListSpec
        ? string[]
        : string;

export type ParsedOptions<S extends OptionSpecs> = {
  [K in keyof S]: S[K] extends { default: unknown } ? ValueOf<S[K]> : ValueOf<S[K]> | undefined;
};

export interface ParseResult<S extends OptionSpecs> {
  options: ParsedOptions<S>;
  positionals: string[];
  help: boolean;
}

/** camelCase option name → --kebab-case flag. */
export function flagName(name: string): string {
  return '--' + name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

/** camelCase option name → LIMBO_SNAKE_CASE variable. */
export function envName(name: string, spec: OptionSpec): string | undefined {
  if (spec.env === false) return undefined;
  return spec.env ?? 'LIMBO_' + name.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase();
}

export function parseOptions<S extends OptionSpecs>(
  specs: S,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ParseResult<S> {
  const byFlag = new Map<string, string>();
  for (const name of Object.keys(specs)) byFlag.set(flagName(name), name);
  const raw = new Map<string, string | string[]>();
  const positionals: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const name = byFlag.get(flag);
    if (name === undefined) throw new UsageError(`unknown option ${flag}`);
    const spec = specs[name] as OptionSpec;
    let value: string;
    if (eq !== -1) value = arg.slice(eq + 1);
    else if (spec.type === 'bool') value = 'true';
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`option ${flag} needs a value`);
      value = next;
      i++;
    }
    if (spec.type === 'list') {
      const prev = raw.get(name);
      raw.set(name, [...(Array.isArray(prev) ? prev : []), ...splitList(value)]);
    } else raw.set(name, value);
  }
  const options: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const flag = flagName(name);
    let value = raw.get(name);
    let source = flag;
    const envVar = envName(name, spec);
    if (value === undefined && envVar !== undefined && env[envVar] !== undefined && env[envVar] !== '') {
      value = spec.type === 'list' ? splitList(env[envVar]) : env[envVar];
      source = envVar;
    }
    options[name] = value === undefined ? spec.default : convert(spec, value, source);
  }
  return { options: options as ParsedOptions<S>, positionals, help };
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function convert(spec: OptionSpec, value: string | string[], source: string): unknown {
  if (Array.isArray(value)) return value;
  switch (spec.type) {
    case 'int': {
      if (!/^-?\d+$/.test(value.trim()))
        throw new UsageError(`${source}: expected an integer, got "${value}"`);
      const n = Number.parseInt(value, 10);
      if (spec.min !== undefined && n < spec.min)
        throw new UsageError(`${source}: must be at least ${spec.min}, got ${n}`);
      if (spec.max !== undefined && n > spec.max)
        throw new UsageError(`${source}: must be at most ${spec.max}, got ${n}`);
      return n;
    }
    case 'bool':
      if (['true', '1', 'yes'].includes(value)) return true;
      if (['false', '0', 'no'].includes(value)) return false;
      throw new UsageError(`${source}: expected true or false, got "${value}"`);
    case 'enum':
      if (!spec.values.includes(value))
        throw new UsageError(`${source}: expected one of ${spec.values.join(', ')}, got "${value}"`);
      return value;
    case 'list':
      return splitList(value);
    case 'string':
      return value;
  }
}

/** Help text: usage line, description, then one line per option with its env form and default. */
export function formatHelp(usage: string, description: string, specs: OptionSpecs): string {
  const lines = [`usage: ${usage}`, '', description, '', 'options:'];
  for (const [name, spec] of Object.entries(specs)) {
    const envVar = envName(name, spec);
    const values = spec.type === 'enum' ? ` (${spec.values.join('|')})` : '';
    const def = spec.default !== undefined ? ` [default: ${String(spec.default)}]` : '';
    lines.push(`  ${flagName(name).padEnd(26)} ${spec.description}${values}${def}`);
    if (envVar !== undefined) lines.push(`  ${''.padEnd(26)} env ${envVar}`);
  }
  lines.push(`  ${'--help'.padEnd(26)} show this help`);
  return lines.join('\n') + '\n';
}
