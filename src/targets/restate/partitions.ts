// Partition processors and their leaders, read with `restatectl partitions list` through one
// node's real fabric address (`-S`: that node only, no discovery through advertised addresses,
// which may be proxies the testbed is hurting). The table looks like (1.7.12):
//   Alive partition processors (nodes config v12, partition table v1)
//    ID  NODE  MODE      STATUS  EPOCH  APPLIED  DURABLE  ARCHIVED  LSN-LAG  …  UPDATED
//    0   N1:2  Leader    Active  e2     3        0        -         0        …  1 second and 986 ms ago
import { RestatectlError, runRestatectl } from './restatectl.js';

export interface PartitionProcessor {
  partition: number;
  /** Plain node id (`force-node-id`, = the 1-based node index of the local cluster). */
  nodeId: number;
  /** As restatectl prints it: `N<id>:<generation>`. */
  node: string;
  mode: string;
  status: string;
  epoch: number | undefined;
  appliedLsn: number | undefined;
  lsnLag: number | undefined;
}

export interface PartitionLeader {
  partition: number;
  nodeId: number;
  node: string;
  epoch: number | undefined;
}

const optionalNumber = (s: string | undefined): number | undefined => {
  const n = Number(s?.replace(/^e/, ''));
  return s === undefined || s === '-' || !Number.isFinite(n) ? undefined : n;
};

export function parsePartitionsList(text: string): PartitionProcessor[] {
  const lines = text.split('\n');
  const headerAt = lines.findIndex((l) => /^\s*ID\s+NODE\s+MODE\b/.test(l));
  if (headerAt < 0) return [];
  const header = lines[headerAt]!.trim().split(/\s+/);
  const col = (name: string): number => header.indexOf(name);
  const rows: PartitionProcessor[] = [];
  for (const line of lines.slice(headerAt + 1)) {
    const cells = line.trim().split(/\s+/);
    if (cells.length < 4 || !/^\d+$/.test(cells[0]!)) continue;
    const node = cells[col('NODE')] ?? '';
    const nodeId = Number(/^N(\d+)/.exec(node)?.[1]);
    if (!Number.isInteger(nodeId)) continue;
    rows.push({
      partition: Number(cells[0]),
      nodeId,
      node,
      mode: cells[col('MODE')] ?? '',
      status: cells[col('STATUS')] ?? '',
      epoch: optionalNumber(cells[col('EPOCH')]),
      appliedLsn: optionalNumber(cells[col('APPLIED')]),
      lsnLag: optionalNumber(cells[col('LSN-LAG')]),
    });
  }
  return rows;
}

/** Partition → its leader; a partition without a processor in `Leader` mode is absent. */
export function leadersOf(rows: readonly PartitionProcessor[]): Map<number, PartitionLeader> {
  const leaders = new Map<number, PartitionLeader>();
  for (const r of rows) {
    if (r.mode !== 'Leader') continue;
    const known = leaders.get(r.partition);
    // Two claimants (a deposed leader not yet told): the higher epoch wins.
    if (known === undefined || (r.epoch ?? -1) > (known.epoch ?? -1))
      leaders.set(r.partition, { partition: r.partition, nodeId: r.nodeId, node: r.node, epoch: r.epoch });
  }
  return leaders;
}

export async function listPartitionProcessors(
  fabricAddress: string,
  timeoutMs = 10_000,
): Promise<PartitionProcessor[]> {
  const r = await runRestatectl(['partitions', 'list', '-S', fabricAddress], timeoutMs);
  const rows = parsePartitionsList(r.stdout);
  if (rows.length === 0)
    throw new RestatectlError(
      `restatectl partitions list via ${fabricAddress} gave no table (exit ${r.code}): ${`${r.stdout}\n${r.stderr}`.trim()}`,
    );
  return rows;
}

export async function listPartitions(fabricAddress: string): Promise<Map<number, PartitionLeader>> {
  return leadersOf(await listPartitionProcessors(fabricAddress));
}
