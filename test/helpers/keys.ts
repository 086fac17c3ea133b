// Picks keys whose invocations land on a given partition, so a test can aim at one leader.
import { partitionKeyOf, partitionOf } from '../../src/protocol/ids.js';

/** `count` distinct strings s with prefix such that `${service}/${s}` routes to `partition`. */
export function keysOnPartition(
  service: string,
  partition: number,
  numPartitions: number,
  count: number,
  prefix = 'k',
): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count && i < 1_000_000; i++) {
    const key = `${prefix}${i}`;
    if (partitionOf(partitionKeyOf(`${service}/${key}`), numPartitions) === partition) out.push(key);
  }
  return out;
}
