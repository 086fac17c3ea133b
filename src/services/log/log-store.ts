// The partitions of the log in one data directory: `partition-<n>.log` each, opened and
// recovered at start. Validates appends (partition, size, emptiness) before they reach a
// partition, so bad input is refused with a clear message and nothing else is affected.
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../telemetry/logger.js';
import { ensureDir } from './ensure-dir.js';
import { LogServerError, unknownPartition } from './errors.js';
import {
  PartitionLog,
  type AppendDone,
  type PartitionLogHooks,
  type SlowSyncParams,
  type WriteErrorParams,
} from './partition-log.js';
import type { FaultHook } from '../fault-hooks.js';

export interface LogStoreOptions {
  dataDir: string;
  numPartitions: number;
  maxRecordBytes: number;
  logger: Logger;
  now?: () => number;
  hooks?: (partition: number) => PartitionLogHooks;
  /** The log.slow-fsync fault hook (partition-log.ts). */
  slowSync?: FaultHook<SlowSyncParams>;
  /** The log.write-error fault hook (partition-log.ts). */
  writeError?: FaultHook<WriteErrorParams>;
}

export class LogStore {
  private constructor(
    private readonly o: LogStoreOptions,
    private readonly partitions: PartitionLog[],
  ) {}

  static async open(o: LogStoreOptions): Promise<LogStore> {
    await ensureDir(o.dataDir);
    const opened: PartitionLog[] = [];
    try {
      for (let p = 0; p < o.numPartitions; p++) {
        opened.push(
          await PartitionLog.open({
            partition: p,
            file: join(o.dataDir, `partition-${p}.log`),
            logger: o.logger,
            now: o.now,
            hooks: o.hooks?.(p),
            ...(o.slowSync !== undefined ? { slowSync: o.slowSync } : {}),
            ...(o.writeError !== undefined ? { writeError: o.writeError } : {}),
          }),
        );
      }
      await syncDir(o.dataDir);
    } catch (err) {
      await Promise.all(opened.map((l) => l.close()));
      throw err;
    }
    return new LogStore(o, opened);
  }

  get numPartitions(): number {
    return this.partitions.length;
  }

  /** The partition's log, or E_UNKNOWN_PARTITION. */
  partition(partition: number): PartitionLog {
    const log = Number.isInteger(partition) ? this.partitions[partition] : undefined;
    if (!log) throw unknownPartition(partition, this.partitions.length);
    return log;
  }

  append(partition: number, records: readonly Uint8Array[]): Promise<{ firstLsn: number; lastLsn: number }> {
    return this.check(partition, records).append(records);
  }

  /** append answered through `done` (PartitionLog.enqueue): throws when refused. */
  enqueue(partition: number, records: readonly Uint8Array[], done: AppendDone): void {
    this.check(partition, records).enqueue(records, done);
  }

  /** The partition's log, once `records` are fit to append to it (else the refusal, thrown). */
  private check(partition: number, records: readonly Uint8Array[]): PartitionLog {
    const log = this.partition(partition);
    if (records.length === 0)
      throw new LogServerError('E_EMPTY_APPEND', `append to partition ${partition} carries no records`);
    for (let i = 0; i < records.length; i++) {
      const bytes = (records[i] as Uint8Array).length;
      if (bytes > this.o.maxRecordBytes)
        throw new LogServerError(
          'E_RECORD_TOO_LARGE',
          `record ${i} is ${bytes} bytes, over the limit of ${this.o.maxRecordBytes} bytes (--max-record-bytes)`,
        );
    }
    return log;
  }

  async close(): Promise<void> {
    await Promise.all(this.partitions.map((l) => l.close()));
  }
}

/** fsync a directory so that files created or renamed in it survive a crash. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
