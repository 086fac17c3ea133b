// Per-partition leadership metadata, `(epoch, leaderNode)`, changed only by compare-and-swap
// and made durable before anyone hears of the change:
//
//   CAS(p, expectedEpoch, node) ─▶ (serialised) check ─▶ write metadata.json.tmp ─▶ fsync
//        ─▶ rename over metadata.json ─▶ fsync dir ─▶ apply in memory ─▶ answer
//
// Epochs therefore never go backwards, even after kill -9 and restart.
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { unknownPartition } from './errors.js';
import { syncDir } from './log-store.js';

export interface PartitionMeta {
  epoch: number;
  leaderNode: string;
}

export interface CasResult extends PartitionMeta {
  ok: boolean;
}

interface MetadataFile {
  format: 1;
  partitions: PartitionMeta[];
}

const FILE = 'metadata.json';

export class MetadataStore {
  private chain: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly dataDir: string,
    private readonly numPartitions: number,
    /** May hold more entries than numPartitions (kept from a run with more partitions). */
    private readonly entries: PartitionMeta[],
  ) {}

  static async open(dataDir: string, numPartitions: number): Promise<MetadataStore> {
    let entries: PartitionMeta[] = [];
    try {
      const parsed = JSON.parse(await readFile(join(dataDir, FILE), 'utf8')) as MetadataFile;
      entries = parsed.partitions.map((e) => ({ epoch: Number(e.epoch), leaderNode: String(e.leaderNode) }));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`cannot read ${FILE}: ${String(err)}`, { cause: err });
    }
    while (entries.length < numPartitions) entries.push({ epoch: 0, leaderNode: '' });
    return new MetadataStore(dataDir, numPartitions, entries);
  }

  get(partition: number): PartitionMeta {
    const e =
      Number.isInteger(partition) && partition < this.numPartitions ? this.entries[partition] : undefined;
    if (!e) throw unknownPartition(partition, this.numPartitions);
    return { ...e };
  }

  /** Sets the leader only if the epoch is still `expectedEpoch`; the epoch becomes expectedEpoch + 1. */
  compareAndSwap(partition: number, expectedEpoch: number, leaderNode: string): Promise<CasResult> {
    this.get(partition);
    const run = async (): Promise<CasResult> => {
      const current = this.get(partition);
      if (current.epoch !== expectedEpoch) return { ok: false, ...current };
      const next: PartitionMeta = { epoch: expectedEpoch + 1, leaderNode };
      const entries = this.entries.map((e, i) => (i === partition ? next : e));
      await this.persist(entries);
      this.entries[partition] = next;
      return { ok: true, ...next };
    };
    const result = this.chain.then(run, run);
    this.chain = result.catch(() => undefined);
    return result;
  }

  private async persist(entries: PartitionMeta[]): Promise<void> {
    const body: MetadataFile = { format: 1, partitions: entries };
    const tmp = join(this.dataDir, FILE + '.tmp');
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify(body) + '\n');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, join(this.dataDir, FILE));
    await syncDir(this.dataDir);
  }

  /** Resolves once every CAS already asked for is done. */
  async drain(): Promise<void> {
    await this.chain;
  }
}
