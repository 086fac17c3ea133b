// Picking one value out of a system's JSON answer, and reading it as a number, for the
// leadership probe's `leaderWhen` and for signals read from JSON endpoints:
//
//   /jsz  {"meta_cluster":{"leader":"n2"}, "account_details":[{"stream_detail":[{"cluster":{"leader":"n1"}}]}]}
//   'meta_cluster.leader'                             ─▶ "n2"
//   'account_details.0.stream_detail.0.cluster.leader' ─▶ "n1"   (a number indexes an array; `[0]` too)

/** The path's segments: dots separate keys; `a[0]` is the same as `a.0`. */
export function pathSegments(path: string): string[] {
  return path
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter((s) => s !== '');
}

/** The value at `path` (see pathSegments), or undefined where the path leads nowhere. */
export function jsonAt(json: unknown, path: string): unknown {
  let at: unknown = json;
  for (const key of pathSegments(path)) {
    if (Array.isArray(at)) {
      if (!/^\d+$/.test(key)) return undefined;
      at = at[Number(key)];
    } else if (typeof at === 'object' && at !== null && Object.hasOwn(at, key))
      at = (at as Record<string, unknown>)[key];
    else return undefined;
  }
  return at;
}

/** How a JSON value becomes a number: as it is, or 1/0 for "equals this" (as leaderWhen compares). */
export interface JsonNumberRule {
  /** 1 when the value equals this (after templates are filled), else 0. */
  equals?: unknown;
  /** 1 when the value equals the one at this path of the same answer, else 0. */
  equalsPath?: string;
}

/**
 * The value at `path` as a number: a number as it is, a boolean 1/0, a numeric string its
 * number; with a comparison, 1 when it holds and 0 when not (an absent value is not equal).
 * Undefined when the path leads nowhere or the value is not a number, or the value compared
 * with is absent (no sample rather than a made-up one).
 */
export function jsonNumber(json: unknown, path: string, rule: JsonNumberRule = {}): number | undefined {
  const value = jsonAt(json, path);
  if (rule.equalsPath !== undefined) {
    const other = jsonAt(json, rule.equalsPath);
    if (other === undefined) return undefined;
    return value === other ? 1 : 0;
  }
  // A value that is absent is not the one compared with (no leader named: not this one).
  if (rule.equals !== undefined) return value === rule.equals ? 1 : 0;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return undefined;
}
