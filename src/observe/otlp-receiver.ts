// An OTLP/HTTP trace receiver for a run: what services export to when the runner sets
// OTEL_EXPORTER_OTLP_ENDPOINT. Accepts POST /v1/traces as JSON or protobuf (optionally
// gzip), normalises every span into a SpanRecord and hands batches to `onSpans`.
//
//   exporter ──POST /v1/traces──▶ decode (json | protobuf) ─▶ SpanRecord[] ─▶ onSpans (e.g. spans.jsonl)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

import type { SpanRecord } from '../run-data/spans.js';

export type { SpanRecord };

export interface StartedOtlpReceiver extends AsyncDisposable {
  /** Base URL to use as OTEL_EXPORTER_OTLP_ENDPOINT (the exporters append /v1/traces). */
  readonly url: string;
  /** Spans received so far (bounded by maxSpans; later ones are counted in `dropped`). */
  readonly spans: readonly SpanRecord[];
  readonly dropped: number;
  stop(): Promise<void>;
}

export interface OtlpReceiverOptions {
  host?: string;
  port?: number;
  maxSpans?: number;
  maxBodyBytes?: number;
  onSpans?: (spans: SpanRecord[]) => void;
}

const protoPath = fileURLToPath(new URL('../../../src/observe/otlp-trace.proto', import.meta.url));
let requestType: protobuf.Type | undefined;
function exportRequestType(): protobuf.Type {
  requestType ??= protobuf.loadSync(protoPath).lookupType('limbo.otlp.ExportTraceServiceRequest');
  return requestType;
}

export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<StartedOtlpReceiver> {
  const maxSpans = options.maxSpans ?? 1_000_000;
  const maxBodyBytes = options.maxBodyBytes ?? 64 * 1024 * 1024;
  const spans: SpanRecord[] = [];
  let dropped = 0;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= maxBodyBytes) chunks.push(c);
    });
    req.on('end', () => {
      if (size > maxBodyBytes) {
        res.writeHead(413).end();
        return;
      }
      const type = String(req.headers['content-type'] ?? '');
      let body = Buffer.concat(chunks);
      try {
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const batch = type.includes('json') ? decodeJson(body) : decodeProtobuf(body);
        const room = Math.max(0, maxSpans - spans.length);
        spans.push(...batch.slice(0, room));
        dropped += Math.max(0, batch.length - room);
        options.onSpans?.(batch);
        if (type.includes('json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } catch (err) {
        res
          .writeHead(400, { 'content-type': 'text/plain' })
          .end(`bad OTLP payload: ${(err as Error).message}`);
      }
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const port = (server.address() as AddressInfo).port;
  const stop = (): Promise<void> =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    spans,
    get dropped() {
      return dropped;
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

// ------------------------------------------------------------------ decoding

type AnyValue = Record<string, unknown>;

function anyValue(v: AnyValue | undefined): string | number | boolean {
  if (!v) return '';
  if (typeof v.stringValue === 'string') return v.stringValue;
  if (v.boolValue !== undefined) return Boolean(v.boolValue);
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  if (v.arrayValue !== undefined) {
    const values = ((v.arrayValue as { values?: AnyValue[] }).values ?? []).map(anyValue);
    return JSON.stringify(values);
  }
  if (v.bytesValue !== undefined) return hex(v.bytesValue);
  return '';
}

function attributes(list: unknown): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of (list as { key: string; value?: AnyValue }[] | undefined) ?? [])
    out[kv.key] = anyValue(kv.value);
  return out;
}

function hex(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  return '';
}

function nanosToMs(v: unknown): number {
  if (typeof v === 'string') return Number(BigInt(v) / 1000n) / 1000;
  if (typeof v === 'number') return v / 1e6;
  if (v && typeof v === 'object' && 'low' in v && 'high' in v) {
    const l = v as { low: number; high: number };
    return Number((BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0)) / 1e6;
  }
  return 0;
}

/** Walks the decoded request (same shape for JSON and for protobufjs objects in camelCase). */
function normalise(request: Record<string, unknown>): SpanRecord[] {
  const out: SpanRecord[] = [];
  for (const rs of (request.resourceSpans as Record<string, unknown>[] | undefined) ?? []) {
    const resource = attributes((rs.resource as { attributes?: unknown } | undefined)?.attributes);
    const service = String(resource['service.name'] ?? 'unknown');
    for (const ss of (rs.scopeSpans as Record<string, unknown>[] | undefined) ?? []) {
      for (const s of (ss.spans as Record<string, unknown>[] | undefined) ?? []) {
        const status = (s.status as { code?: number | string; message?: string } | undefined) ?? {};
        out.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: typeof s.name === 'string' ? s.name : '',
          service,
          kind: Number(s.kind ?? 0),
          startMs: nanosToMs(s.startTimeUnixNano),
          endMs: nanosToMs(s.endTimeUnixNano),
          attributes: attributes(s.attributes),
          status: { code: Number(status.code ?? 0), message: String(status.message ?? '') },
        });
      }
    }
  }
  return out;
}

export function decodeJson(body: Buffer): SpanRecord[] {
  return normalise(JSON.parse(body.toString('utf8')) as Record<string, unknown>);
}

export function decodeProtobuf(body: Buffer): SpanRecord[] {
  const type = exportRequestType();
  const message = type.decode(body);
  return normalise(type.toObject(message, { longs: String }));
}
