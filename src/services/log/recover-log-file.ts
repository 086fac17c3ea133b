// Opening a partition file after a crash: scan every frame from the start, keep the offset
// of each whole record (the in-memory LSN index), and cut the file at the first frame that
// is torn or corrupt, so nothing after it can ever be served.
//
//   [frame 1][frame 2] … [frame n][torn / garbage …]
//                                 ^ truncate here, fsync
import type { FileHandle } from 'node:fs/promises';
import { checkFrame, FRAME_HEADER_BYTES } from './frame.js';

const SCAN_CHUNK_BYTES = 1024 * 1024;

export interface RecoveredLog {
  /** starts[i] = file offset of the frame of LSN i + 1. */
  starts: number[];
  /** End of the last whole record: where the next append goes. */
  endOffset: number;
  /** Bytes cut from the tail (0 when the file was clean). */
  cutBytes: number;
  cutReason?: string;
}

export async function recoverLogFile(fh: FileHandle): Promise<RecoveredLog> {
  const size = (await fh.stat()).size;
  const starts: number[] = [];
  let offset = 0;
  let buf = Buffer.alloc(0);
  let bufStart = 0;
  let cutReason: string | undefined;
  while (offset < size) {
    const check = checkFrame(buf, offset - bufStart);
    if (check.kind === 'ok') {
      starts.push(offset);
      offset += FRAME_HEADER_BYTES + check.payloadBytes;
      continue;
    }
    if (check.kind === 'bad') {
      cutReason = `${check.why} at offset ${offset}`;
      break;
    }
    // Not enough bytes buffered: read from this frame's start.
    if (offset + check.needBytes > size) {
      cutReason = `partial frame at offset ${offset} (${size - offset} bytes)`;
      break;
    }
    const want = Math.min(size - offset, Math.max(SCAN_CHUNK_BYTES, check.needBytes));
    buf = Buffer.allocUnsafe(want);
    const { bytesRead } = await fh.read(buf, 0, want, offset);
    buf = buf.subarray(0, bytesRead);
    bufStart = offset;
    if (bytesRead < check.needBytes) {
      cutReason = `short read at offset ${offset}`;
      break;
    }
  }
  const result: RecoveredLog = { starts, endOffset: offset, cutBytes: size - offset };
  if (cutReason !== undefined) result.cutReason = cutReason;
  return result;
}
