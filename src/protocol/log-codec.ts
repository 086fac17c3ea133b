// The log's busiest messages on the wire — the appends' batches (AppendBatchRequest and
// AppendBatchResponse, on Log.AppendStream and Log.AppendBatch) and the tails (ReadResponse, on
// Log.Read) — encoded and decoded by protobufjs's own codec for their types. proto-loader's
// serializers copy every message into protobufjs's objects before encoding and out of them after
// decoding (fromObject / toObject: each LSN through a Long, every field through generic default
// handling), which costs about as much again as the encoding: ~2× for a batch of 16 appends.
//
//   wire.ts object ─encode─▶ bytes            (no fromObject: the object already has the types)
//   bytes ─decode─▶ protobufjs message ─▶ wire.ts object (uint64 as number, absent → default)
//
// The bytes on the wire are the same, and each side's objects have the shapes proto-loader gives
// them with transport/grpc.ts's options (test/protocol/log-codec.test.ts holds the two codecs side by side).
import protobuf from 'protobufjs';
import type * as w from './wire.js';

export interface Codec<T> {
  serialize: (value: T) => Buffer;
  deserialize: (bytes: Buffer) => T;
}

export interface LogCodecs {
  appendBatchRequest: Codec<w.AppendBatchRequest>;
  appendBatchResponse: Codec<w.AppendBatchResponse>;
  readResponse: Codec<w.ReadResponse>;
}

/** A uint64 as protobufjs decodes it: a Long (with the `long` package, as here), else a number. */
type Uint64 = number | protobuf.Long;

/** The decoded messages as protobufjs hands them over (absent fields read their defaults). */
interface DecodedBatchRequest {
  items: { partition: number; records: Buffer[]; traceparent: string }[];
  batchId: Uint64;
}
interface DecodedBatchResponse {
  results: { firstLsn: Uint64; lastLsn: Uint64; code: number; message: string }[];
  batchId: Uint64;
}
interface DecodedReadResponse {
  entries: { lsn: Uint64; payload: Buffer }[];
}

/** An unsigned 64-bit value as a number (exact below 2^53, as proto-loader's `longs: Number`). */
function toNumber(v: Uint64): number {
  return typeof v === 'number' ? v : (v.high >>> 0) * 4294967296 + (v.low >>> 0);
}

/** The codecs, from the types of `protoPath` (limbo.proto). */
export function logCodecs(protoPath: string): LogCodecs {
  const root = protobuf.loadSync(protoPath);
  const typeOf = (name: string): protobuf.Type => root.lookupType(`limbo.v1.${name}`);
  const encoder =
    <T extends object>(type: protobuf.Type) =>
    (value: T): Buffer =>
      // protobufjs writes Node Buffers in Node (its BufferWriter).
      type.encode(value).finish() as Buffer;
  const decode = <T>(type: protobuf.Type, bytes: Buffer): T => type.decode(bytes) as unknown as T;
  const batchRequest = typeOf('AppendBatchRequest');
  const batchResponse = typeOf('AppendBatchResponse');
  const readResponse = typeOf('ReadResponse');
  return {
    appendBatchRequest: {
      serialize: encoder(batchRequest),
      deserialize: (bytes) => {
        const m = decode<DecodedBatchRequest>(batchRequest, bytes);
        return {
          items: m.items.map((i) => ({
            partition: i.partition,
            records: i.records,
            traceparent: i.traceparent,
          })),
          batchId: toNumber(m.batchId),
        };
      },
    },
    appendBatchResponse: {
      serialize: encoder(batchResponse),
      deserialize: (bytes) => {
        const m = decode<DecodedBatchResponse>(batchResponse, bytes);
        return {
          results: m.results.map((r) => ({
            firstLsn: toNumber(r.firstLsn),
            lastLsn: toNumber(r.lastLsn),
            code: r.code,
            message: r.message,
          })),
          batchId: toNumber(m.batchId),
        };
      },
    },
    readResponse: {
      serialize: encoder(readResponse),
      deserialize: (bytes) => ({
        entries: decode<DecodedReadResponse>(readResponse, bytes).entries.map((e) => ({
          lsn: toNumber(e.lsn),
          payload: e.payload,
        })),
      }),
    },
  };
}
