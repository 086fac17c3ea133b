// The on-disk frame of one log record:
//
//   ┌──────────────┬──────────────┬──────────────────┐
//   │ length (u32) │ crc32 (u32)  │ payload (length) │   little endian
//   └──────────────┴──────────────┴──────────────────┘
//
// The CRC covers the length bytes and the payload, so a torn write (a partial frame, a
// zero-filled tail after a crash, garbage) never parses as a record.
import { crc32 } from 'node:zlib';

export const FRAME_HEADER_BYTES = 8;
/** No frame is ever larger than this, whatever --max-record-bytes was when it was written. */
export const FRAME_PAYLOAD_BYTES_MAX = 64 * 1024 * 1024;

function checksum(lengthBytes: Buffer, payload: Uint8Array): number {
  return crc32(payload, crc32(lengthBytes));
}

/** Writes the frame of `payload` into `target` at `offset`; returns the offset after it. */
export function writeFrame(target: Buffer, offset: number, payload: Uint8Array): number {
  target.writeUInt32LE(payload.length, offset);
  const crc = checksum(target.subarray(offset, offset + 4), payload);
  target.writeUInt32LE(crc, offset + 4);
  target.set(payload, offset + FRAME_HEADER_BYTES);
  return offset + FRAME_HEADER_BYTES + payload.length;
}

export function frameBytes(payloadBytes: number): number {
  return FRAME_HEADER_BYTES + payloadBytes;
}

export type FrameCheck =
  | { kind: 'ok'; payloadBytes: number }
  /** Not enough bytes in `buf` to decide: read `needBytes` from the frame start and ask again. */
  | { kind: 'need'; needBytes: number }
  | { kind: 'bad'; why: string };

/** Checks the frame starting at `buf[offset]`. */
export function checkFrame(buf: Buffer, offset: number): FrameCheck {
  const available = buf.length - offset;
  if (available < FRAME_HEADER_BYTES) return { kind: 'need', needBytes: FRAME_HEADER_BYTES };
  const length = buf.readUInt32LE(offset);
  if (length > FRAME_PAYLOAD_BYTES_MAX) return { kind: 'bad', why: `implausible length ${length}` };
  if (available < FRAME_HEADER_BYTES + length)
    return { kind: 'need', needBytes: FRAME_HEADER_BYTES + length };
  const expected = buf.readUInt32LE(offset + 4);
  const payload = buf.subarray(offset + FRAME_HEADER_BYTES, offset + FRAME_HEADER_BYTES + length);
  const actual = checksum(buf.subarray(offset, offset + 4), payload);
  if (actual !== expected) return { kind: 'bad', why: 'checksum mismatch' };
  return { kind: 'ok', payloadBytes: length };
}
