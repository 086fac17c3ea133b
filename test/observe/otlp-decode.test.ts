// The receiver reads OTLP/protobuf straight from the decoded message (no toObject copy): the
// same spans sent as protobuf and as OTLP/JSON must come out the same, field by field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { decodeJson, decodeProtobuf } from '../../src/observe/otlp-receiver.js';

const proto = fileURLToPath(new URL('../../../src/observe/otlp-trace.proto', import.meta.url));
const T = '0af7651916cd43dd8448eb211c80319c';

test('OTLP/protobuf and OTLP/JSON of the same spans decode to the same records', () => {
  const Request = protobuf.loadSync(proto).lookupType('limbo.otlp.ExportTraceServiceRequest');
  const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex');
  const values = [
    ['s', { stringValue: 'text' }, 'text'],
    ['empty', { stringValue: '' }, ''],
    ['yes', { boolValue: true }, true],
    ['no', { boolValue: false }, false],
    ['zero', { intValue: 0 }, 0],
    ['neg', { intValue: -5 }, -5],
    ['big', { intValue: 9_007_199_254_740_000 }, 9_007_199_254_740_000],
    ['d', { doubleValue: 2.5 }, 2.5],
    ['arr', { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 2 }] } }, '["a",2]'],
    ['raw', { bytesValue: bytes('beef') }, 'beef'],
  ] as const;
  const start = 1_764_000_000_123_456_789n;
  const span = (id: string, parent: string | undefined, status: boolean) => ({
    traceId: bytes(T),
    spanId: bytes(id),
    ...(parent !== undefined ? { parentSpanId: bytes(parent) } : {}),
    name: `op ${id}`,
    kind: 2,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 5_000_000n),
    attributes: values.map(([key, value]) => ({ key, value })),
    ...(status ? { status: { code: 2, message: 'boom' } } : {}),
  });
  const message = Request.fromObject({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'processor-1' } }] },
        scopeSpans: [
          {
            spans: [
              span('00f067aa0ba902b7', undefined, true),
              span('00f067aa0ba902b8', '00f067aa0ba902b7', false),
            ],
          },
        ],
      },
      { scopeSpans: [{ spans: [span('00f067aa0ba902b9', undefined, false)] }] },
    ],
  });
  const fromProtobuf = decodeProtobuf(Buffer.from(Request.encode(message).finish()));

  // The OTLP/JSON form: hex ids, int64 as decimal strings.
  const jsonValue = (v: Record<string, unknown>): Record<string, unknown> =>
    'intValue' in v
      ? { intValue: String(v.intValue) }
      : 'bytesValue' in v
        ? { bytesValue: (v.bytesValue as Buffer).toString('base64') }
        : 'arrayValue' in v
          ? {
              arrayValue: {
                values: (v.arrayValue as { values: Record<string, unknown>[] }).values.map(jsonValue),
              },
            }
          : v;
  const jsonSpan = (s: ReturnType<typeof span>) => ({
    traceId: T,
    spanId: s.spanId.toString('hex'),
    ...(s.parentSpanId !== undefined ? { parentSpanId: s.parentSpanId.toString('hex') } : {}),
    name: s.name,
    kind: s.kind,
    startTimeUnixNano: s.startTimeUnixNano,
    endTimeUnixNano: s.endTimeUnixNano,
    attributes: s.attributes.map(({ key, value }) => ({ key, value: jsonValue(value) })),
    ...(s.status !== undefined ? { status: s.status } : {}),
  });
  const json = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'processor-1' } }] },
        scopeSpans: [
          {
            spans: [
              jsonSpan(span('00f067aa0ba902b7', undefined, true)),
              jsonSpan(span('00f067aa0ba902b8', '00f067aa0ba902b7', false)),
            ],
          },
        ],
      },
      { scopeSpans: [{ spans: [jsonSpan(span('00f067aa0ba902b9', undefined, false))] }] },
    ],
  };
  const fromJson = decodeJson(Buffer.from(JSON.stringify(json)));
  assert.equal(fromProtobuf.length, 3);
  assert.deepEqual(fromProtobuf, fromJson);
  const [first, second, third] = fromProtobuf;
  assert.deepEqual(first!.attributes, Object.fromEntries(values.map(([k, , want]) => [k, want])));
  assert.deepEqual(
    [first!.service, first!.traceId, first!.spanId, first!.parentSpanId, first!.kind, first!.status],
    ['processor-1', T, '00f067aa0ba902b7', '', 2, { code: 2, message: 'boom' }],
  );
  assert.equal(first!.startMs, Number(start / 1000n) / 1000);
  assert.equal(first!.endMs - first!.startMs, 5);
  assert.deepEqual([second!.parentSpanId, second!.status], ['00f067aa0ba902b7', { code: 0, message: '' }]);
  assert.equal(third!.service, 'unknown', 'a resource without service.name');
});
