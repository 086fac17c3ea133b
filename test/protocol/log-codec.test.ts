// The Log service's own codec for its busiest messages (protocol/log-codec.ts) against
// proto-loader's, which the rest of the protocol uses and which these messages used before:
// the same bytes for the same object, and the same object from the same bytes (uint64 as
// numbers beyond 32 bits, absent fields at their defaults, empty and non-ASCII values).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import { protoLoaderOptions, serviceDefinitions } from '../../src/transport/grpc.js';

const protoPath = fileURLToPath(new URL('../../../src/protocol/limbo.proto', import.meta.url));
const theirs = (protoLoader.loadSync(protoPath, protoLoaderOptions)['limbo.v1.Log'] ?? {}) as Record<
  string,
  protoLoader.MethodDefinition<object, object>
>;
const ours = serviceDefinitions.log;

const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const requests = [
  {
    items: [
      { partition: 3, records: [Buffer.from('a'), Buffer.alloc(0), Buffer.alloc(300, 7)], traceparent },
      { partition: 0, records: [], traceparent: '' },
    ],
    batchId: 2 ** 40 + 7,
  },
  { items: [{ partition: 1, records: [Buffer.from('{"k":"ü"}')], traceparent: '' }] },
  { items: [] },
];
const responses = [
  {
    results: [
      { firstLsn: 2 ** 33 + 1, lastLsn: 2 ** 33 + 3, code: 0, message: '' },
      { firstLsn: 0, lastLsn: 0, code: 14, message: 'partition 2 failed: ünavailable ✗' },
    ],
    batchId: 9,
  },
  { results: [] },
];
const reads = [
  {
    entries: [
      { lsn: 1, payload: Buffer.from('first') },
      { lsn: 2 ** 45, payload: Buffer.alloc(0) },
    ],
  },
  { entries: [] },
];

function sameBothWays(method: string, side: 'request' | 'response', values: object[]): void {
  const serialize = side === 'request' ? 'requestSerialize' : 'responseSerialize';
  const deserialize = side === 'request' ? 'requestDeserialize' : 'responseDeserialize';
  const t = theirs[method]!;
  const o = ours[method]! as unknown as protoLoader.MethodDefinition<object, object>;
  assert.notEqual(o[serialize], t[serialize], `Log.${method} has a codec of its own`);
  for (const value of values) {
    const bytes = t[serialize](value);
    assert.ok(
      o[serialize](value).equals(bytes),
      `${method} ${side}: the same bytes for ${JSON.stringify(value)}`,
    );
    assert.deepEqual(o[deserialize](bytes), t[deserialize](bytes), `${method} ${side}: the same object back`);
  }
}

test('the Log codec writes and reads what proto-loader does, for appends and reads', () => {
  for (const method of ['AppendStream', 'AppendBatch']) {
    sameBothWays(method, 'request', requests);
    sameBothWays(method, 'response', responses);
  }
  sameBothWays('Read', 'response', reads);
});
