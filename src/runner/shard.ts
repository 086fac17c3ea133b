// Sharded runs: `--shard k/N` splits a command's list of work items (suites, schedules, bug
// switches, seeds) over N jobs, and `limbo merge` puts the jobs' results back together.
//
//   unsharded list ──▶ shard k of N keeps the items with index % N == k-1 (same seeds)
//   each shard ──▶ <out>/limbo-shard-k-of-N.json (the whole list, what it ran, its results)
//   limbo merge <out dirs…> ──▶ every shard 1..N once, the same whole list ──▶ one result
//
// A shard never draws anything of its own: which items it runs and with which seeds follows
// from the unsharded list and the seed alone, so the union of 1/N..N/N is the unsharded run.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../util/errors.js';

export interface Shard {
  /** 1-based: shard k of `count`. */
  index: number;
  count: number;
}

/** The most shards a run may be split into (a CI matrix is far smaller). */
export const MAX_SHARDS = 256;

/** `k/N` → shard k of N (1 ≤ k ≤ N); anything else is a usage error naming `flag`. */
export function parseShard(text: string, flag = '--shard'): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (m === null) throw new UsageError(`${flag} must be k/N (e.g. 2/3), got "${text}"`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS) throw new UsageError(`${flag} ${text}: N must be 1 to ${MAX_SHARDS}`);
  if (index < 1 || index > count) throw new UsageError(`${flag} ${text}: k must be 1 to ${count}`);
  return { index, count };
}

export const formatShard = (s: Shard): string => `${s.index}/${s.count}`;

/** Whether item `i` (0-based, of the unsharded list) belongs to `shard`; no shard: every item. */
export function inShard(i: number, shard: Shard | undefined): boolean {
  return shard === undefined || i % shard.count === shard.index - 1;
}

/** The items of the unsharded list that `shard` runs, in their unsharded order. */
export function shardItems<T>(items: readonly T[], shard: Shard | undefined): T[] {
  return items.filter((_, i) => inShard(i, shard));
}

/**
 * Shards must agree on the seed, or shard k would run other seeds than the unsharded run does;
 * a random default seed differs per job, so a shard needs `--seed`.
 */
export function requireShardSeed(shard: Shard | undefined, seed: number | undefined): void {
  if (shard !== undefined && seed === undefined)
    throw new UsageError(
      '--shard needs --seed: every shard must draw the same seeds as the unsharded run (e.g. --seed 1 on every job)',
    );
}

export type ShardedCommand = 'run' | 'explore' | 'detect' | 'soak';

/** What one shard leaves for `limbo merge`: the whole list, its part and its results. */
export interface ShardManifest<R = unknown> {
  kind: 'limbo-shard';
  version: 1;
  command: ShardedCommand;
  shard: Shard;
  seed: number;
  /** What the results were run against (the target, or the switches' base target). */
  target: string;
  /** Every item of the unsharded list, by name, in its order. */
  items: string[];
  /** The items given to this shard (its part of `items`). */
  part: string[];
  /** When the shard ended. */
  endedAt: string;
  /** The command's own results (paths in them are relative to the manifest's directory). */
  result: R;
}

const manifestName = (s: Shard): string => `limbo-shard-${s.index}-of-${s.count}.json`;

/** Writes the shard's manifest into `dir` (the command's --out); returns its path. */
export function writeShardManifest<R>(dir: string, m: Omit<ShardManifest<R>, 'kind' | 'version'>): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, manifestName(m.shard));
  writeFileSync(file, JSON.stringify({ kind: 'limbo-shard', version: 1, ...m }, null, 2) + '\n');
  return file;
}

/** A manifest read back, with the directory it was found in. */
export interface FoundManifest {
  dir: string;
  file: string;
  manifest: ShardManifest;
}

/** Every shard manifest directly in `dir` (a shard's --out). */
export function readShardManifests(dir: string): FoundManifest[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    throw new UsageError(`${dir}: no such directory (give each shard's --out)`);
  }
  return names
    .filter((n) => /^limbo-shard-\d+-of-\d+\.json$/.test(n))
    .sort()
    .map((n) => {
      const file = join(dir, n);
      let manifest: unknown;
      try {
        manifest = JSON.parse(readFileSync(file, 'utf8'));
      } catch (err) {
        throw new UsageError(`${file}: not JSON (${err instanceof Error ? err.message : String(err)})`);
      }
      if (!isManifest(manifest)) throw new UsageError(`${file}: not a limbo shard manifest`);
      return { dir, file, manifest };
    });
}

function isManifest(m: unknown): m is ShardManifest {
  if (typeof m !== 'object' || m === null) return false;
  const o = m as Partial<ShardManifest>;
  return (
    o.kind === 'limbo-shard' &&
    o.version === 1 &&
    typeof o.command === 'string' &&
    typeof o.shard?.index === 'number' &&
    typeof o.shard.count === 'number' &&
    Array.isArray(o.items) &&
    Array.isArray(o.part) &&
    typeof o.result === 'object'
  );
}

/**
 * Checks that `found` are the N shards of one run: one command, one seed, one target and one
 * whole list, every shard 1..N exactly once, each having run exactly its part. Returns them in
 * shard order; a usage error names the first problem (a missing shard among them).
 */
export function completeShards(found: readonly FoundManifest[]): FoundManifest[] {
  if (found.length === 0)
    throw new UsageError('no shard manifests (limbo-shard-k-of-N.json) in the directories given');
  const first = found[0]!.manifest;
  const same = (m: ShardManifest): string | undefined =>
    m.command !== first.command
      ? `command ${m.command}, not ${first.command}`
      : m.shard.count !== first.shard.count
        ? `${m.shard.count} shards, not ${first.shard.count}`
        : m.seed !== first.seed
          ? `seed ${m.seed}, not ${first.seed}`
          : m.target !== first.target
            ? `target ${m.target}, not ${first.target}`
            : JSON.stringify(m.items) !== JSON.stringify(first.items)
              ? 'another list of items'
              : undefined;
  const byIndex = new Map<number, FoundManifest>();
  for (const f of found) {
    const differs = same(f.manifest);
    if (differs !== undefined)
      throw new UsageError(`${f.file}: not a shard of the same run as ${found[0]!.file} (${differs})`);
    const twice = byIndex.get(f.manifest.shard.index);
    if (twice !== undefined)
      throw new UsageError(`shard ${formatShard(f.manifest.shard)} given twice: ${twice.file} and ${f.file}`);
    const expected = shardItems(first.items, f.manifest.shard);
    if (JSON.stringify(expected) !== JSON.stringify(f.manifest.part))
      throw new UsageError(
        `${f.file}: was given ${f.manifest.part.join(', ')}, its shard is ${expected.join(', ')}`,
      );
    byIndex.set(f.manifest.shard.index, f);
  }
  const missing: string[] = [];
  for (let k = 1; k <= first.shard.count; k++) if (!byIndex.has(k)) missing.push(`${k}/${first.shard.count}`);
  if (missing.length > 0)
    throw new UsageError(`missing shard(s) ${missing.join(', ')} of limbo ${first.command}`);
  return [...byIndex.values()].sort((a, b) => a.manifest.shard.index - b.manifest.shard.index);
}

/** One line of `--plan`: the item's place in the unsharded list, its name and its seed. */
export function planLine(index: number, total: number, item: string, seed: number): string {
  return `plan ${index + 1}/${total} ${item} seed ${seed}`;
}

/** The shard's items with their places in the unsharded list. */
export function shardEntries<T>(items: readonly T[], shard: Shard | undefined): { index: number; item: T }[] {
  return items.flatMap((item, index) => (inShard(index, shard) ? [{ index, item }] : []));
}
