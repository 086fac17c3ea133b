// Loads limbo.proto once and hands out typed gRPC clients and service definitions.
//
// One client = one channel = one HTTP/2 connection to one address. Keepalive pings about
// every second and declares the connection dead after about three without an answer, so
// a black-holed link fails every call on it (UNAVAILABLE) instead of leaving it waiting.
// A lost or refused connection is dialled again after 25 ms, backing off to 1 s: services
// started side by side find the log as soon as it listens (its proxies lead nowhere until
// then), and a healed link is used again within about one backoff step.
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type * as w from '../protocol/wire.js';
import { AppendBatcher } from './append-batcher.js';
import { AppendStreamSender } from './append-stream.js';
import { logCodecs } from '../protocol/log-codec.js';
import { ProcessorCallSender } from './call-stream.js';

const protoPath = fileURLToPath(new URL('../../../src/protocol/limbo.proto', import.meta.url));

/** How proto-loader shapes messages as objects (wire.ts describes the result). */
export const protoLoaderOptions: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

const packageDefinition = protoLoader.loadSync(protoPath, protoLoaderOptions);

interface LoadedService {
  service: grpc.ServiceDefinition;
  new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ChannelOptions): grpc.Client;
}
const loaded = grpc.loadPackageDefinition(packageDefinition) as unknown as {
  limbo: { v1: { Log: LoadedService; Controller: LoadedService; Processor: LoadedService } };
};
const pkg = loaded.limbo.v1;

/**
 * The Log service with its busiest methods' messages through protobufjs's codec directly
 * (log-codec.ts): the same bytes, about half the CPU a batch. Clients and the server both use it.
 */
function logServiceWithCodecs(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const c = logCodecs(protoPath);
  const batches = {
    requestSerialize: c.appendBatchRequest.serialize,
    requestDeserialize: c.appendBatchRequest.deserialize,
    responseSerialize: c.appendBatchResponse.serialize,
    responseDeserialize: c.appendBatchResponse.deserialize,
  };
  const method = (name: string, codec: object): grpc.MethodDefinition<unknown, unknown> => {
    const m = service[name];
    if (m === undefined) throw new Error(`limbo.proto has no Log.${name}`);
    return { ...m, ...codec };
  };
  return {
    ...service,
    AppendBatch: method('AppendBatch', batches),
    AppendStream: method('AppendStream', batches),
    Read: method('Read', {
      responseSerialize: c.readResponse.serialize,
      responseDeserialize: c.readResponse.deserialize,
    }),
  };
}
const logService = logServiceWithCodecs(pkg.Log.service);
const LogClientConstructor = grpc.makeClientConstructor(
  logService,
  'limbo.v1.Log',
) as unknown as LoadedService;

export const serviceDefinitions = {
  log: logService,
  controller: pkg.Controller.service,
  processor: pkg.Processor.service,
} as const;

/** Channel options shared by every limbo client (keepalive, quick reconnects, no hidden retries). */
export const clientChannelOptions: grpc.ChannelOptions = {
  'grpc.keepalive_time_ms': 1000,
  'grpc.keepalive_timeout_ms': 2000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.initial_reconnect_backoff_ms': 25,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.enable_retries': 0,
  // No channelz bookkeeping (per-call counters and traces nobody reads): a few % of CPU per call.
  'grpc.enable_channelz': 0,
  'grpc.max_receive_message_length': 16 * 1024 * 1024,
  'grpc.max_send_message_length': 16 * 1024 * 1024,
};

/** Server options: accept the clients' frequent keepalive pings, ping back to find dead peers. */
export const serverOptions: grpc.ServerOptions = {
  'grpc.keepalive_time_ms': 1000,
  'grpc.keepalive_timeout_ms': 2000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.http2.min_ping_interval_without_data_ms': 500,
  'grpc.enable_channelz': 0,
  'grpc.max_receive_message_length': 16 * 1024 * 1024,
  'grpc.max_send_message_length': 16 * 1024 * 1024,
};

export interface CallOptions {
  /** Per-call deadline in milliseconds from now. */
  timeoutMs?: number;
  metadata?: grpc.Metadata;
  signal?: AbortSignal;
}

type UnaryMethod<Req, Res> = (req: Req, options?: CallOptions) => Promise<Res>;
type StreamMethod<Req, Res> = (req: Req, options?: CallOptions) => grpc.ClientReadableStream<Res>;

function unary<Req, Res>(client: grpc.Client, name: string): UnaryMethod<Req, Res> {
  const method = (client as unknown as Record<string, grpc.requestCallback<Res> & CallableFunction>)[
    name
  ] as unknown as (
    req: Req,
    md: grpc.Metadata,
    opts: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: Res) => void,
  ) => grpc.ClientUnaryCall;
  return (req, options = {}) =>
    new Promise<Res>((resolve, reject) => {
      const callOptions: grpc.CallOptions = {};
      if (options.timeoutMs !== undefined) callOptions.deadline = Date.now() + options.timeoutMs;
      const call = method.call(
        client,
        req,
        options.metadata ?? new grpc.Metadata(),
        callOptions,
        (err, res) => {
          options.signal?.removeEventListener('abort', onAbort);
          if (err) reject(err);
          else resolve(res as Res);
        },
      );
      const onAbort = (): void => call.cancel();
      if (options.signal?.aborted) call.cancel();
      else options.signal?.addEventListener('abort', onAbort, { once: true });
    });
}

function serverStream<Req, Res>(client: grpc.Client, name: string): StreamMethod<Req, Res> {
  const method = (client as unknown as Record<string, unknown>)[name] as (
    req: Req,
    md: grpc.Metadata,
    opts: grpc.CallOptions,
  ) => grpc.ClientReadableStream<Res>;
  return (req, options = {}) => {
    const callOptions: grpc.CallOptions = {};
    if (options.timeoutMs !== undefined) callOptions.deadline = Date.now() + options.timeoutMs;
    const call = method.call(client, req, options.metadata ?? new grpc.Metadata(), callOptions);
    const signal = options.signal;
    if (signal) {
      if (signal.aborted) call.cancel();
      else {
        // A long-lived signal (a service's own) outlives many streams: each takes its listener back.
        const onAbort = (): void => call.cancel();
        signal.addEventListener('abort', onAbort, { once: true });
        call.once('status', () => signal.removeEventListener('abort', onAbort));
      }
    }
    return call;
  };
}

export interface Closable {
  /** The underlying channel, e.g. to watch its connectivity state. */
  readonly channel: grpc.Client;
  close(): void;
}

export interface LogClient extends Closable {
  /**
   * A durable append. Appends made while earlier ones are on the wire travel together in one
   * batch (append-batcher.ts), sent over the client's Log.AppendStream (append-stream.ts);
   * each keeps its deadline, signal and the
   * `traceparent` of its metadata, and is answered on its own.
   */
  append: UnaryMethod<w.AppendRequest, w.AppendResponse>;
  /** Batches sent, the appends they carried, and the AppendStreams opened to carry them. */
  readonly appendStats: { calls: number; appends: number; streams: number };
  read: StreamMethod<w.ReadRequest, w.ReadResponse>;
  getTail: UnaryMethod<w.GetTailRequest, w.GetTailResponse>;
}

export interface ControllerClient extends Closable {
  heartbeat: UnaryMethod<w.HeartbeatRequest, w.HeartbeatResponse>;
  watchPartitionTable: StreamMethod<w.WatchPartitionTableRequest, w.PartitionTable>;
  getPartitionTable: UnaryMethod<w.GetPartitionTableRequest, w.PartitionTable>;
  compareAndSwapLeader: UnaryMethod<w.CompareAndSwapLeaderRequest, w.CompareAndSwapLeaderResponse>;
  transferLeadership: UnaryMethod<w.TransferLeadershipRequest, w.TransferLeadershipResponse>;
}

export interface ProcessorClient extends Closable {
  /**
   * Submit and GetOutput travel over the client's one Processor.Calls stream (call-stream.ts),
   * each with its own deadline and signal, failing with the status a unary call would.
   */
  submit: UnaryMethod<w.SubmitRequest, w.SubmitResponse>;
  getOutput: UnaryMethod<w.GetOutputRequest, w.GetOutputResponse>;
  /** The same two RPCs as unary calls (one HTTP/2 stream each). */
  unary: {
    submit: UnaryMethod<w.SubmitRequest, w.SubmitResponse>;
    getOutput: UnaryMethod<w.GetOutputRequest, w.GetOutputResponse>;
  };
  /** Calls streams opened so far, and calls on them waiting for an answer. */
  readonly callStats: { streams: number; open: number };
  subscribe: StreamMethod<w.SubscribeRequest, w.IngressNotification>;
}

function channel(ctor: LoadedService, address: string, options?: grpc.ChannelOptions): grpc.Client {
  return new ctor(address, grpc.credentials.createInsecure(), { ...clientChannelOptions, ...options });
}

export function createLogClient(address: string, options?: grpc.ChannelOptions): LogClient {
  const c = channel(LogClientConstructor, address, options);
  const appendStream = (c as unknown as Record<string, unknown>).appendStream as (
    md: grpc.Metadata,
  ) => grpc.ClientDuplexStream<w.AppendBatchRequest, w.AppendBatchResponse>;
  const sender = new AppendStreamSender(() => appendStream.call(c, new grpc.Metadata()));
  const batcher = new AppendBatcher({ send: (req) => sender.send(req) });
  return {
    channel: c,
    close: () => {
      sender.close();
      c.close();
    },
    append: (req, options = {}) => {
      const tp = options.metadata?.get('traceparent')[0];
      return batcher.append(req, {
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
        ...(typeof tp === 'string' ? { traceparent: tp } : {}),
      });
    },
    get appendStats() {
      return { ...batcher.stats, streams: sender.streams };
    },
    read: serverStream(c, 'read'),
    getTail: unary(c, 'getTail'),
  };
}

export function createControllerClient(address: string, options?: grpc.ChannelOptions): ControllerClient {
  const c = channel(pkg.Controller, address, options);
  return {
    channel: c,
    close: () => c.close(),
    heartbeat: unary(c, 'heartbeat'),
    watchPartitionTable: serverStream(c, 'watchPartitionTable'),
    getPartitionTable: unary(c, 'getPartitionTable'),
    compareAndSwapLeader: unary(c, 'compareAndSwapLeader'),
    transferLeadership: unary(c, 'transferLeadership'),
  };
}

export function createProcessorClient(address: string, options?: grpc.ChannelOptions): ProcessorClient {
  const c = channel(pkg.Processor, address, options);
  const calls = (c as unknown as Record<string, unknown>).calls as (
    md: grpc.Metadata,
  ) => grpc.ClientDuplexStream<w.ProcessorCall, w.ProcessorReply>;
  const sender = new ProcessorCallSender(() => calls.call(c, new grpc.Metadata()));
  return {
    channel: c,
    close: () => {
      sender.close();
      c.close();
    },
    submit: (req, options) => sender.submit(req, options),
    getOutput: (req, options) => sender.getOutput(req, options),
    unary: { submit: unary(c, 'submit'), getOutput: unary(c, 'getOutput') },
    get callStats() {
      return sender.stats;
    },
    subscribe: serverStream(c, 'subscribe'),
  };
}

/** Binds a grpc-js server to host:port (port 0 picks a free one); resolves to the bound port. */
export function bindServer(server: grpc.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
}

export { grpc };
