// One partition's append-only log file with group commit and tailing reads.
//
//   append(records) ─▶ queue ─┐   one flush at a time:
//   append(records) ─▶ queue ─┼─▶ take all queued (≤ maxBatchBytes) ─▶ one O_DSYNC write
//   append(records) ─▶ queue ─┘     ─▶ LSNs become durable ─▶ next group's write, then acks
//
// One write is in flight at a time, and a group is acknowledged only once its own write has
// returned (so every group before it is durable too); the next group's write is handed over
// before the durable group is acknowledged, so the disk does not idle while the main thread
// answers.
//
// Only durable records are ever read: the index (file offset per LSN) grows after the
// write, and reads stop at the durable tail. The group's bytes go in one write on a handle
// opened O_DSYNC, which returns once they are on disk as fdatasync would — one trip to the
// thread pool per group commit instead of two (write, then fdatasync), which matters when
// the event loop is busy answering the previous group. The most recent durable batches stay
// in memory (bounded by maxCachedBytes), so tailing readers — every replica follows every
// partition — read what was just written without a read syscall; older records come from
// the file. A failed write poisons the partition: the file's state is unknown (see
// "fsyncgate": nothing, part or all of the write may be on disk, whatever the error says), so
// every append queued is refused, and after `recoverAfterMs` the partition recovers from the
// file as a restart would: the durable prefix must be intact, whole frames past it (a write
// that reached the disk although it reported an error) become records, a torn frame is cut.
import { constants, write } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { LogEntry } from '../../protocol/wire.js';
import type { Logger } from '../../telemetry/logger.js';
import { Fifo } from '../../util/fifo.js';
import { LogServerError } from './errors.js';
import { checkFrame, frameBytes, FRAME_HEADER_BYTES, writeFrame } from './frame.js';
import { recoverLogFile } from './recover-log-file.js';
import type { FaultHook } from '../fault-hooks.js';

/**
 * The log.write-error fault hook's parameters: each durable write of these partitions fails
 * (EIO) after `written` of it reached the disk: none, all but a torn last frame, or all.
 */
export interface WriteErrorParams {
  written: 'none' | 'torn' | 'all';
  partitions: ReadonlySet<number> | undefined;
}

/** The log.slow-fsync fault hook's parameters: each durable write of these partitions held back. */
export interface SlowSyncParams {
  delayMs: number;
  partitions: ReadonlySet<number> | undefined;
}

export interface PartitionLogHooks {
  /** Called once per acknowledged append with its record count and latency. */
  onAppended?(records: number, durationMs: number): void;
  onFsync?(): void;
  onTail?(tailLsn: number): void;
  /** The partition recovered from its file after a failed write, finding `records` the write left. */
  onRecovered?(records: number): void;
}

export interface PartitionLogOptions {
  partition: number;
  file: string;
  logger: Logger;
  /** Bytes taken into one write + fsync (at least one append always goes). */
  maxBatchBytes?: number;
  /** Bytes waiting for the next flush before appends are refused as overloaded. */
  maxPendingBytes?: number;
  /** Bytes of the most recent durable batches kept in memory for tailing reads (default 8 MiB). */
  maxCachedBytes?: number;
  now?: () => number;
  hooks?: PartitionLogHooks;
  /** Fault hook: while on, each durable write completes `delayMs` late (a slow disk). */
  slowSync?: FaultHook<SlowSyncParams>;
  /** Fault hook: while on, each durable write fails with EIO (after part of it may have landed). */
  writeError?: FaultHook<WriteErrorParams>;
  /** How long a partition failed by a write error waits before it recovers from its file (default 250 ms). */
  recoverAfterMs?: number;
}

/**
 * How an accepted append is answered, once: its LSN range when its records are durable, or
 * the error that ended it (a failed write, the log closing with it still queued).
 */
export type AppendDone = (err: Error | undefined, firstLsn: number, lastLsn: number) => void;

interface PendingAppend {
  records: readonly Uint8Array[];
  bytes: number;
  startedMs: number;
  done: AppendDone;
}

/** One group commit: its appends, their frames as written, and each record's file offset. */
interface Group {
  batch: PendingAppend[];
  buf: Buffer;
  starts: number[];
}

export interface ReadLimits {
  maxEntries: number;
  maxBytes: number;
}

export class PartitionLog {
  private readonly queue = new Fifo<PendingAppend>();
  private pendingBytes = 0;
  private flushing: Promise<void> | undefined;
  private failed: Error | undefined;
  /** The recovery from the file after a failed write, while one is due or under way. */
  private recovering:
    { timer: NodeJS.Timeout | undefined; fire: () => void; done: Promise<void> } | undefined;
  private closed = false;
  private tailWake: { promise: Promise<void>; resolve: () => void };
  private readonly maxBatchBytes: number;
  private readonly maxPendingBytes: number;
  private readonly maxCachedBytes: number;
  /**
   * The newest durable batches as written, oldest first, contiguous up to endOffset. A Fifo:
   * a full cache holds tens of thousands of small batches, and dropping the oldest from an
   * array moves all the others.
   */
  private readonly cached = new Fifo<{ offset: number; buf: Buffer }>();
  private cachedBytes = 0;
  private readonly now: () => number;

  private constructor(
    private readonly o: PartitionLogOptions,
    private readonly fh: FileHandle,
    /** The same file opened O_WRONLY | O_DSYNC: appends go through it. */
    private readonly dsync: FileHandle,
    /** starts[i] = file offset of LSN i + 1 (durable records only). */
    private readonly starts: number[],
    private endOffset: number,
  ) {
    this.maxBatchBytes = o.maxBatchBytes ?? 4 * 1024 * 1024;
    this.maxPendingBytes = o.maxPendingBytes ?? 64 * 1024 * 1024;
    this.maxCachedBytes = o.maxCachedBytes ?? 8 * 1024 * 1024;
    this.now = o.now ?? (() => performance.now());
    this.tailWake = deferred();
  }

  /** Opens (creating if missing) and recovers the file: a torn or corrupt tail is cut. */
  static async open(o: PartitionLogOptions): Promise<PartitionLog> {
    const fh = await open(o.file, 'a+');
    try {
      const recovered = await recoverLogFile(fh);
      if (recovered.cutBytes > 0) {
        o.logger.warn('cut torn or corrupt log tail', {
          partition: o.partition,
          file: o.file,
          keptRecords: recovered.starts.length,
          cutBytes: recovered.cutBytes,
          why: recovered.cutReason,
        });
        await fh.truncate(recovered.endOffset);
        await fh.sync();
      }
      const dsync = await open(o.file, constants.O_WRONLY | constants.O_DSYNC);
      const log = new PartitionLog(o, fh, dsync, recovered.starts, recovered.endOffset);
      o.hooks?.onTail?.(log.tailLsn);
      return log;
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  get partition(): number {
    return this.o.partition;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The last durable LSN (0 when empty). */
  get tailLsn(): number {
    return this.starts.length;
  }

  /** Appends records; resolves once they are on disk (O_DSYNC write) with their LSN range. */
  append(records: readonly Uint8Array[]): Promise<{ firstLsn: number; lastLsn: number }> {
    return new Promise((resolve, reject) =>
      this.enqueue(records, (err, firstLsn, lastLsn) => (err ? reject(err) : resolve({ firstLsn, lastLsn }))),
    );
  }

  /**
   * append without a promise, for callers that answer many appends at once (the log server's
   * batches): throws when the append is refused (stopped, failed, overloaded), else `done` is
   * called once, later.
   */
  enqueue(records: readonly Uint8Array[], done: AppendDone): void {
    if (this.closed) throw new LogServerError('E_STOPPED', 'log server is stopping');
    if (this.failed)
      throw new LogServerError(
        'E_LOG_FAILED',
        `partition ${this.o.partition} failed: ${this.failed.message}`,
      );
    let bytes = 0;
    for (const r of records) bytes += frameBytes(r.length);
    if (this.pendingBytes > 0 && this.pendingBytes + bytes > this.maxPendingBytes)
      throw new LogServerError(
        'E_OVERLOADED',
        `partition ${this.o.partition} has ${this.pendingBytes} bytes waiting for disk; try again`,
      );
    this.queue.push({ records, bytes, startedMs: this.now(), done });
    this.pendingBytes += bytes;
    this.flushing ??= this.flushLoop();
  }

  /**
   * Writes the queued appends, one group commit at a time. Once a group's write is durable the
   * next group's write goes to the thread pool before the durable group is answered, so the
   * disk does not wait for the answers (~3 µs an append on the main thread).
   */
  private async flushLoop(): Promise<void> {
    try {
      // Appends made in the same job (the items of one AppendBatch call) join this group
      // commit instead of waiting for the next one.
      await Promise.resolve();
      let writing = this.writeNextGroup();
      while (writing !== undefined) {
        const group = await writing;
        if (group === undefined) return; // the write failed: every append is answered
        const firstLsn = this.commit(group);
        writing = this.writeNextGroup();
        this.answer(group, firstLsn);
        // An answer may have queued more (an append made from its callback).
        writing ??= this.writeNextGroup();
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Takes the next group off the queue and writes it; resolves with it once durable (undefined: it failed). */
  private writeNextGroup(): Promise<Group | undefined> | undefined {
    if (this.queue.length === 0 || this.failed) return undefined;
    const batch: PendingAppend[] = [];
    let bytes = 0;
    while (this.queue.length > 0) {
      const next = this.queue.peek() as PendingAppend;
      if (batch.length > 0 && bytes + next.bytes > this.maxBatchBytes) break;
      batch.push(next);
      this.queue.shift();
      bytes += next.bytes;
    }
    this.pendingBytes -= bytes;
    // Its own memory, not a slice of Node's shared 8 KiB pool: the batch may stay cached
    // (remember) long after, and a cached slice would keep its whole slab alive, with all else
    // the process cut from it — ~49× the cache's bound in small batches (cache-memory.test).
    const buf = Buffer.allocUnsafeSlow(bytes);
    const starts: number[] = [];
    let at = 0;
    for (const p of batch)
      for (const r of p.records) {
        starts.push(this.endOffset + at);
        at = writeFrame(buf, at, r);
      }
    const group: Group = { batch, buf, starts };
    return this.writeAll(buf, this.endOffset, (starts.at(-1) as number) - this.endOffset).then(
      () => group,
      (err: unknown) => {
        this.failed = err instanceof Error ? err : new Error(String(err));
        this.o.logger.error('log write failed; partition stops taking appends', {
          partition: this.o.partition,
          error: this.failed,
        });
        const e = new LogServerError('E_LOG_FAILED', `partition ${this.o.partition}: ${this.failed.message}`);
        for (const p of [...batch, ...this.queue.takeAll()]) settle(p, e, 0, 0);
        this.pendingBytes = 0;
        this.scheduleRecovery();
        return undefined;
      },
    );
  }

  /** Writes `buf` at `position` durably; `lastFrameAt` is where its last frame begins in it. */
  private async writeAll(buf: Buffer, position: number, lastFrameAt: number): Promise<void> {
    const failing = this.o.writeError;
    if (failing?.on === true && (failing.params.partitions?.has(this.o.partition) ?? true)) {
      failing.hit();
      // What reached the disk before the error: nothing, every frame but half of the last one
      // (a torn write), or everything (the error came after the data was written).
      const { written } = failing.params;
      const landed =
        written === 'all'
          ? buf.length
          : written === 'torn'
            ? lastFrameAt + Math.ceil((buf.length - lastFrameAt) / 2)
            : 0;
      for (let at = 0; at < landed;) at += await writeAt(this.dsync.fd, buf, at, landed - at, position + at);
      throw Object.assign(
        new Error(
          `EIO: i/o error, write (${landed} of ${buf.length} bytes reached the disk; log.write-error hook)`,
        ),
        { code: 'EIO' },
      );
    }
    let written = 0;
    while (written < buf.length)
      written += await writeAt(this.dsync.fd, buf, written, buf.length - written, position + written);
    const slow = this.o.slowSync;
    if (slow?.on === true && (slow.params.partitions?.has(this.o.partition) ?? true)) {
      slow.hit();
      const ms = slow.params.delayMs;
      await new Promise((resolve) => setTimeout(resolve, ms));
    }
    this.o.hooks?.onFsync?.();
  }

  /** A durable group joins the index (readable from now on); returns its first LSN. */
  private commit(group: Group): number {
    const firstLsn = this.starts.length + 1;
    this.remember(this.endOffset, group.buf);
    this.endOffset += group.buf.length;
    for (const s of group.starts) this.starts.push(s);
    this.o.hooks?.onTail?.(this.tailLsn);
    this.wakeTailers();
    return firstLsn;
  }

  private answer(group: Group, firstLsn: number): void {
    const doneMs = this.now();
    let lsn = firstLsn - 1;
    for (const p of group.batch) {
      const first = lsn + 1;
      lsn += p.records.length;
      this.o.hooks?.onAppended?.(p.records.length, doneMs - p.startedMs);
      settle(p, undefined, first, lsn);
    }
  }

  private wakeTailers(): void {
    const wake = this.tailWake;
    this.tailWake = deferred();
    wake.resolve();
  }

  /**
   * Resolves once the tail is past `afterLsn` or the log closes (at once if it already is): the
   * one promise every tailing reader waits on, settled by the next group commit.
   */
  tailPast(afterLsn: number): Promise<void> {
    return this.tailLsn > afterLsn || this.closed ? Promise.resolve() : this.tailWake.promise;
  }

  /** Durable entries from `fromLsn` on (0 and 1 both mean the start), within the limits. */
  async read(fromLsn: number, limits: ReadLimits): Promise<LogEntry[]> {
    const range = this.rangeOf(fromLsn, limits);
    if (range === undefined) return [];
    const inMemory = this.inMemory(range);
    if (inMemory !== undefined) return inMemory;
    const buf = await this.fromFile(range.startOffset, range.endOffset);
    const entries: LogEntry[] = [];
    for (let lsn = range.first; lsn <= range.last; lsn++) {
      const at = (this.starts[lsn - 1] as number) - range.startOffset;
      const check = checkFrame(buf, at);
      if (check.kind !== 'ok')
        throw new LogServerError(
          'E_LOG_FAILED',
          `partition ${this.o.partition}: record ${lsn} is corrupt on disk (${check.kind === 'bad' ? check.why : 'short'})`,
        );
      entries.push({
        lsn,
        payload: buf.subarray(at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + check.payloadBytes),
      });
    }
    return entries;
  }

  /**
   * read without a promise when the entries are in memory (the tailing readers' case: what was
   * just written) or there are none; undefined when they must come from the file. Frames in
   * memory are the bytes this process wrote: their lengths come from the index, and their
   * checksums, there for what comes back from the disk, are not computed again.
   */
  readInMemory(fromLsn: number, limits: ReadLimits): LogEntry[] | undefined {
    const range = this.rangeOf(fromLsn, limits);
    return range === undefined ? [] : this.inMemory(range);
  }

  /** The LSNs and bytes a read from `fromLsn` covers (undefined: none, the reader is caught up). */
  private rangeOf(
    fromLsn: number,
    limits: ReadLimits,
  ): { first: number; last: number; startOffset: number; endOffset: number } | undefined {
    const first = Math.max(1, fromLsn);
    const tail = this.tailLsn;
    if (first > tail) return undefined;
    const startOffset = this.starts[first - 1] as number;
    let last = first;
    while (last < tail && last - first + 1 < limits.maxEntries) {
      const nextEnd = this.endOf(last + 1);
      if (nextEnd - startOffset > limits.maxBytes) break;
      last++;
    }
    return { first, last, startOffset, endOffset: this.endOf(last) };
  }

  /** The range's entries from the batches in memory, or undefined when it begins before them. */
  private inMemory(range: {
    first: number;
    last: number;
    startOffset: number;
    endOffset: number;
  }): LogEntry[] | undefined {
    const buf = this.fromCache(range.startOffset, range.endOffset);
    if (buf === undefined) return undefined;
    const entries: LogEntry[] = [];
    for (let lsn = range.first; lsn <= range.last; lsn++) {
      const at = (this.starts[lsn - 1] as number) - range.startOffset;
      entries.push({
        lsn,
        payload: buf.subarray(at + FRAME_HEADER_BYTES, this.endOf(lsn) - range.startOffset),
      });
    }
    return entries;
  }

  /** Keeps a durable batch for tailing readers, dropping the oldest beyond the bound. */
  private remember(offset: number, buf: Buffer): void {
    if (cachedCost(buf) > this.maxCachedBytes) {
      this.cached.clear();
      this.cachedBytes = 0;
      return;
    }
    this.cached.push({ offset, buf });
    this.cachedBytes += cachedCost(buf);
    while (this.cachedBytes > this.maxCachedBytes) this.cachedBytes -= cachedCost(this.cached.shift()!.buf);
  }

  /** [start, end) from the in-memory batches, or undefined when it begins before them. */
  private fromCache(start: number, end: number): Buffer | undefined {
    const oldest = this.cached.peek();
    if (oldest === undefined || oldest.offset > start) return undefined;
    // The batch holding `start`: the last one that begins at or before it (binary search).
    let lo = 0;
    let hi = this.cached.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.cached.at(mid)!.offset <= start) lo = mid;
      else hi = mid - 1;
    }
    const parts: Buffer[] = [];
    for (let i = lo; i < this.cached.length && this.cached.at(i)!.offset < end; i++) {
      const c = this.cached.at(i)!;
      parts.push(c.buf.subarray(Math.max(0, start - c.offset), Math.min(c.buf.length, end - c.offset)));
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  private async fromFile(start: number, end: number): Promise<Buffer> {
    const buf = Buffer.allocUnsafe(end - start);
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await this.fh.read(buf, got, buf.length - got, start + got);
      if (bytesRead === 0)
        throw new LogServerError('E_LOG_FAILED', `short read in partition ${this.o.partition}`);
      got += bytesRead;
    }
    return buf;
  }

  private endOf(lsn: number): number {
    return lsn < this.starts.length ? (this.starts[lsn] as number) : this.endOffset;
  }

  /** After a failed write: recover from the file once `recoverAfterMs` has passed (once at a time). */
  private scheduleRecovery(): void {
    if (this.recovering !== undefined || this.closed) return;
    let fire!: () => void;
    const due = new Promise<void>((resolve) => (fire = resolve));
    const recovering = {
      timer: setTimeout(fire, this.o.recoverAfterMs ?? 250) as NodeJS.Timeout | undefined,
      done: due
        .then(() => this.recoverFromFile())
        .catch((err: unknown) =>
          this.o.logger.error('recovery after a write error failed; the partition stays failed', {
            partition: this.o.partition,
            error: err,
          }),
        )
        .finally(() => {
          if (this.recovering === recovering) this.recovering = undefined;
        }),
      fire,
    };
    this.recovering = recovering;
  }

  /**
   * Re-reads the file as a restart would and takes appends again. The durable prefix must be
   * there as it was (else the partition stays failed); whole frames past it are records a
   * failed write left on disk (their appends were answered with the error: an ambiguous
   * failure, as a disk gives), a torn frame is cut. The in-memory batches are dropped: readers
   * read from the file until new writes fill them again.
   */
  private async recoverFromFile(): Promise<void> {
    if (this.recovering !== undefined) this.recovering.timer = undefined;
    if (this.closed || this.failed === undefined) return;
    const recovered = await recoverLogFile(this.fh);
    if (this.closed) return;
    const intact =
      recovered.starts.length >= this.starts.length &&
      this.starts.every((offset, i) => recovered.starts[i] === offset) &&
      recovered.endOffset >= this.endOffset;
    if (!intact)
      throw new Error(
        `the file holds ${recovered.starts.length} whole records where ${this.starts.length} were durable`,
      );
    if (recovered.cutBytes > 0) {
      await this.fh.truncate(recovered.endOffset);
      await this.fh.sync();
    }
    if (this.closed) return;
    // The frames found were read through the page cache: after a real EIO the kernel may hold
    // pages it never wrote ("fsyncgate"). Written again through the O_DSYNC handle they are
    // on disk before they count; if that fails too, the partition tries again later.
    if (recovered.endOffset > this.endOffset) {
      try {
        const found = await this.fromFile(this.endOffset, recovered.endOffset);
        for (let at = 0; at < found.length;)
          at += await writeAt(this.dsync.fd, found, at, found.length - at, this.endOffset + at);
      } catch (err) {
        this.o.logger.warn('records found after a write error could not be written again; retrying', {
          partition: this.o.partition,
          error: err,
        });
        this.recovering = undefined;
        this.scheduleRecovery();
        return;
      }
      if (this.closed) return;
    }
    const found = recovered.starts.length - this.starts.length;
    for (const offset of recovered.starts.slice(this.starts.length)) this.starts.push(offset);
    this.endOffset = recovered.endOffset;
    this.cached.clear();
    this.cachedBytes = 0;
    this.o.logger.warn('partition recovered from its file after a write error', {
      partition: this.o.partition,
      error: this.failed,
      recordsFound: found,
      cutBytes: recovered.cutBytes,
      ...(recovered.cutReason !== undefined ? { why: recovered.cutReason } : {}),
    });
    // Recovered: a write that fails from here on schedules a recovery of its own.
    this.recovering = undefined;
    this.failed = undefined;
    this.o.hooks?.onRecovered?.(found);
    this.o.hooks?.onTail?.(this.tailLsn);
    if (found > 0) this.wakeTailers();
  }

  /** Finishes the flush under way, refuses what is still queued, wakes readers, closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const recovering = this.recovering;
    if (recovering !== undefined) {
      // A recovery not yet begun never begins; one under way finishes before the file closes.
      if (recovering.timer !== undefined) clearTimeout(recovering.timer);
      recovering.fire();
      await recovering.done;
    }
    const stopped = new LogServerError('E_STOPPED', 'log server is stopping');
    // Appends queued behind the flush under way are refused, never half-acknowledged.
    const queued = this.queue.takeAll();
    this.pendingBytes = 0;
    for (const p of queued) settle(p, stopped, 0, 0);
    await this.flushing;
    this.wakeTailers();
    await this.dsync.close();
    await this.fh.close();
  }
}

/** What a cached batch holds: its bytes and, roughly, its buffer's and entry's own objects. */
function cachedCost(buf: Buffer): number {
  return buf.length + 256;
}

/**
 * One positional write through fs.write's callback: the same thread-pool write as
 * FileHandle.write, with about half its main-thread cost (measured: ~10 against ~16 µs a
 * durable write), once or twice a group commit.
 */
function writeAt(fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    write(fd, buf, offset, length, position, (err, bytesWritten) =>
      err ? reject(err) : resolve(bytesWritten),
    ),
  );
}

/** Answers one append; a callback that throws must not leave the rest of its group unanswered. */
function settle(p: PendingAppend, err: Error | undefined, firstLsn: number, lastLsn: number): void {
  try {
    p.done(err, firstLsn, lastLsn);
  } catch (thrown) {
    queueMicrotask(() => {
      throw thrown;
    });
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
