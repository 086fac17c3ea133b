// A processor node: hosts one replica of each assigned partition and serves the ingress.
//
//   heartbeat loop ──Controller.Heartbeat──▶ log server ──▶ partition table ─▶ replicas
//   Processor.Submit / GetOutput ─▶ replica of the request's partition (NOT_LEADER otherwise)
//   Processor.Subscribe (legacy) ─▶ notification streams, by ingress id
//
// The lease: when no heartbeat has succeeded for `leaseMs`, every replica steps down
// (the controller will declare this node dead after its failure timeout and move on).
import type { Registry } from 'prom-client';
import {
  bindServer,
  createControllerClient,
  createLogClient,
  grpc,
  serverOptions,
  serviceDefinitions,
  type ControllerClient,
  type LogClient,
} from '../../transport/grpc.js';
import type * as w from '../../protocol/wire.js';
import type { Logger } from '../../telemetry/logger.js';
import { noBugs, type BugName } from '../bugs.js';
import { createTracing, type Tracing } from '../../telemetry/tracing.js';
import { createRegistry, startMetricsServer, type StartedMetricsServer } from '../../telemetry/metrics.js';
import type { StartedService } from '../service.js';
import { createProcessorMetrics, type ProcessorMetrics } from './metrics.js';
import {
  leadershipSteps,
  PartitionReplica,
  type LeadershipStepName,
  type Protocol,
  type StepFaultParams,
} from './partition-replica.js';
import {
  createFaultHooks,
  HookParamError,
  partitionsParam,
  type FaultHook,
  type FaultHooks,
} from '../fault-hooks.js';
import { sleep } from '../../util/backoff.js';

export interface ProcessorOptions {
  node: string;
  logAddress: string;
  host?: string;
  port?: number;
  metricsPort?: number;
  /** What ingresses dial to reach this node (e.g. a proxy); defaults to the bound address. */
  advertisedAddress?: string;
  protocol?: Protocol;
  /** Partitions to host; empty = all. */
  partitions?: number[];
  heartbeatIntervalMs?: number;
  leaseMs?: number;
  completionRetentionMs?: number;
  appendTimeoutMs?: number;
  /**
   * A follower's log reads, once caught up, wait this long for more entries to send at once
   * (0: every group commit as it lands). Leaders and candidates always read at once.
   */
  followerReadDelayMs?: number;
  /** Bug switches (src/services/bugs.ts); none by default. */
  bugs?: ReadonlySet<BugName>;
  logger: Logger;
  registry?: Registry;
  /** Defaults to OTLP export configured from `env` (OTEL_* variables). */
  tracing?: Tracing;
  env?: NodeJS.ProcessEnv;
}

export interface StartedProcessor extends StartedService {
  readonly replicas: ReadonlyMap<number, PartitionReplica>;
}

/** The heartbeat and lease defaults (`limbo serve processor` shows the same). */
export const processorDefaults = { heartbeatIntervalMs: 100, leaseMs: 500, followerReadDelayMs: 5 } as const;

export async function startProcessor(options: ProcessorOptions): Promise<StartedProcessor> {
  const host = options.host ?? '127.0.0.1';
  const registry = options.registry ?? createRegistry({ service: options.node });
  const metrics = createProcessorMetrics(registry);
  const tracing = options.tracing ?? createTracing(options.node, options.logger, options.env);
  const faultHooks = createFaultHooks(registry);
  const node = new ProcessorNode(options, metrics, tracing, defineStepFault(faultHooks));
  const server = new grpc.Server(serverOptions);
  server.addService(serviceDefinitions.processor, node.handlers());
  const port = await bindServer(server, host, options.port ?? 0);
  const grpcAddress = `${host}:${port}`;
  let metricsServer: StartedMetricsServer;
  try {
    metricsServer = await startMetricsServer(registry, host, options.metricsPort ?? 0, [faultHooks.route]);
  } catch (err) {
    server.forceShutdown();
    throw err;
  }
  node.start(options.advertisedAddress ?? grpcAddress);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await node.stop();
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000);
        server.tryShutdown(() => {
          clearTimeout(t);
          resolve();
        });
      });
      await metricsServer.stop();
      faultHooks.offAll();
      await tracing.shutdown();
    })());
  return {
    role: 'processor',
    node: options.node,
    addresses: { grpc: grpcAddress, metrics: metricsServer.url },
    replicas: node.replicas,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** `processor.leadership-step`: the chosen steps of a leadership change fail (partition-replica.ts). */
function defineStepFault(hooks: FaultHooks): FaultHook<StepFaultParams> {
  return hooks.define('processor.leadership-step', {
    parse(raw) {
      const steps = raw['steps'] ?? (raw['step'] !== undefined ? [raw['step']] : undefined);
      if (
        !Array.isArray(steps) ||
        steps.length === 0 ||
        !steps.every((x) => leadershipSteps.includes(x as LeadershipStepName))
      )
        throw new HookParamError(`steps: a list of ${leadershipSteps.join(', ')}`);
      return { steps: new Set(steps as LeadershipStepName[]), partitions: partitionsParam(raw) };
    },
  });
}

/** One Processor.Calls stream: its calls still open (by id) and whether it is to end. */
interface CallStream {
  open: Map<number, AbortController>;
  /** End once the open calls are answered (the processor stops, or the ingress half-closed). */
  ending: boolean;
  ended: boolean;
  end(): void;
}

class StreamCallError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

class ProcessorNode {
  readonly replicas = new Map<number, PartitionReplica>();
  private readonly log: LogClient;
  private readonly controller: ControllerClient;
  private readonly subscriptions = new Map<
    string,
    Set<grpc.ServerWritableStream<w.SubscribeRequest, w.IngressNotification>>
  >();
  private readonly abort = new AbortController();
  private heartbeatLoop: Promise<void> | undefined;
  /** When the last heartbeat that succeeded was sent, on the steady clock (performance.now). */
  private lastHeartbeatOkMs = -Infinity;
  /** The last table had a hosted partition without a leader (at start-up, or no live replica). */
  private leaderless = true;
  private inFlight = 0;
  /** Open Processor.Calls streams; ended at stop once their calls are answered. */
  private readonly callStreams = new Set<CallStream>();
  private leaseExpired = true;

  constructor(
    private readonly o: ProcessorOptions,
    private readonly metrics: ProcessorMetrics,
    private readonly tracing: Tracing,
    private readonly stepFault: FaultHook<StepFaultParams>,
  ) {
    this.log = createLogClient(o.logAddress);
    this.controller = createControllerClient(o.logAddress);
  }

  start(advertisedAddress: string): void {
    this.heartbeatLoop = this.heartbeats(advertisedAddress);
  }

  async stop(): Promise<void> {
    this.abort.abort(new Error('processor stopping'));
    await this.heartbeatLoop;
    await Promise.all([...this.replicas.values()].map((r) => r.stop()));
    // Bug switch reply-lost-on-shutdown: drain the calls in flight before closing the server
    // (bounded) — but the replicas stopped without answering them, so they never finish.
    for (let i = 0; i < 100 && this.inFlight > 0 && this.o.bugs?.has('reply-lost-on-shutdown') === true; i++)
      await new Promise((r) => setTimeout(r, 100));
    for (const set of this.subscriptions.values()) for (const call of set) call.end();
    for (const stream of [...this.callStreams]) {
      stream.ending = true;
      stream.end();
    }
    this.log.close();
    this.controller.close();
  }

  private async heartbeats(address: string): Promise<void> {
    const interval = this.o.heartbeatIntervalMs ?? processorDefaults.heartbeatIntervalMs;
    const leaseMs = this.o.leaseMs ?? processorDefaults.leaseMs;
    while (!this.abort.signal.aborted) {
      // The lease is timed on the steady clock: a wall clock set back must not stretch it.
      const started = performance.now();
      try {
        const res = await this.controller.heartbeat(
          { node: this.o.node, address, partitions: this.o.partitions ?? [] },
          { timeoutMs: Math.max(interval * 2, 500), signal: this.abort.signal },
        );
        // The lease runs from when the heartbeat was sent: the controller saw it no earlier,
        // so this node steps down before the controller can declare it dead.
        this.lastHeartbeatOkMs = started;
        this.leaseExpired = false;
        if (res.table) this.onTable(res.table);
      } catch (err) {
        if (this.abort.signal.aborted) break;
        this.o.logger.debug('heartbeat failed', { error: err });
      }
      if (!this.leaseExpired && performance.now() - this.lastHeartbeatOkMs > leaseMs) {
        this.leaseExpired = true;
        this.o.logger.warn('lease expired: no contact with the controller', { leaseMs });
        for (const r of this.replicas.values()) r.onLeaseExpired();
      }
      // While a partition it hosts has no leader, the node asks again soon (at most every
      // 50 ms), so that it learns the first leaders picked at start-up without waiting a
      // whole interval; once every one is led it heartbeats at the interval.
      const every = this.leaderless ? Math.min(interval, 50) : interval;
      const wait = Math.max(0, every - (performance.now() - started));
      // (sleep removes its abort listener when the time is up: one per beat would pile up.)
      await sleep(wait, this.abort.signal).catch(() => undefined);
    }
  }

  private onTable(table: w.PartitionTable): void {
    const hosted =
      this.o.partitions && this.o.partitions.length > 0
        ? this.o.partitions
        : Array.from({ length: table.numPartitions }, (_, i) => i);
    for (const p of hosted) {
      if (p >= table.numPartitions || this.replicas.has(p)) continue;
      const replica = new PartitionReplica({
        partition: p,
        node: this.o.node,
        log: this.log,
        metrics: this.metrics,
        logger: this.o.logger,
        tracer: this.tracing.tracer,
        protocol: this.o.protocol ?? 'rpc',
        completionRetentionMs: this.o.completionRetentionMs ?? 3_600_000,
        appendTimeoutMs: this.o.appendTimeoutMs ?? 5000,
        followerReadDelayMs: this.o.followerReadDelayMs ?? processorDefaults.followerReadDelayMs,
        bugs: this.o.bugs ?? noBugs,
        notify: (ingressId, n) => this.notify(ingressId, n),
        stepFault: this.stepFault,
        claimEpoch: async (expectedEpoch) => {
          const res = await this.controller.compareAndSwapLeader(
            { partition: p, expectedEpoch, leaderNode: this.o.node },
            { timeoutMs: 2000, signal: this.abort.signal },
          );
          if (!res.ok)
            this.o.logger.info('fresh epoch not claimed: the partition moved on', {
              partition: p,
              epoch: res.epoch,
            });
        },
      });
      this.replicas.set(p, replica);
      replica.start();
    }
    for (const a of table.partitions) this.replicas.get(a.partition)?.onAssignment(a);
    this.leaderless = table.partitions.some((a) => this.replicas.has(a.partition) && a.leaderNode === '');
  }

  private notify(ingressId: string, notification: w.IngressNotification): void {
    for (const call of this.subscriptions.get(ingressId) ?? []) call.write(notification);
  }

  private notLeader(partition: number): { result: 'error'; error: w.RpcError } {
    return {
      result: 'error',
      error: {
        code: 'NOT_LEADER',
        message: `${this.o.node} hosts no replica of partition ${partition}`,
        leaderNode: '',
        leaderEpoch: 0,
      },
    };
  }

  /** Runs one call on the replica of its partition (NOT_LEADER when none is hosted here). */
  private serve<Req extends { partition: number }, Res>(
    req: Req,
    rpc: (replica: PartitionReplica, req: Req, signal: AbortSignal) => Promise<Res>,
    signal: AbortSignal,
  ): Promise<Res | ReturnType<ProcessorNode['notLeader']>> {
    const replica = this.replicas.get(req.partition);
    if (!replica) return Promise.resolve(this.notLeader(req.partition));
    this.inFlight++;
    return rpc(replica, req, signal).finally(() => this.inFlight--);
  }

  handlers(): grpc.UntypedServiceImplementation {
    const submitRpc = (
      r: PartitionReplica,
      req: w.SubmitRequest,
      signal: AbortSignal,
    ): Promise<w.SubmitResponse> => r.submit(req, signal);
    const getOutputRpc = (
      r: PartitionReplica,
      req: w.GetOutputRequest,
      signal: AbortSignal,
    ): Promise<w.GetOutputResponse> => r.getOutput(req, signal);
    // Both unary RPCs go to the replica of the request's partition; a cancelled call (the
    // ingress went away) releases the replica's reply slot.
    const unary =
      <Req extends { partition: number }, Res>(
        rpc: (replica: PartitionReplica, req: Req, signal: AbortSignal) => Promise<Res>,
      ): grpc.handleUnaryCall<Req, Res | ReturnType<ProcessorNode['notLeader']>> =>
      (call, callback) => {
        const cancelled = new AbortController();
        const onCancel = (): void => cancelled.abort();
        call.on('cancelled', onCancel);
        this.serve(call.request, rpc, cancelled.signal)
          // Answered: a 'cancelled' from here on (grpc-js also emits it as the stream closes)
          // has nothing left to release, and aborting would build an AbortError per call.
          .finally(() => call.off('cancelled', onCancel))
          .then(
            (res) => callback(null, res),
            (err: Error) => callback({ code: grpc.status.INTERNAL, details: err.message }),
          );
      };
    // The same calls over one stream (Processor.Calls): each answered under its call id as
    // the unary call would be; a cancel, or the stream's end, releases the calls' reply slots.
    const calls: grpc.handleBidiStreamingCall<w.ProcessorCall, w.ProcessorReply> = (call) => {
      const stream: CallStream = { open: new Map(), ending: false, ended: false, end: () => {} };
      stream.end = () => {
        if (stream.ended || stream.open.size > 0) return;
        stream.ended = true;
        this.callStreams.delete(stream);
        call.end();
      };
      this.callStreams.add(stream);
      if (this.abort.signal.aborted) stream.ending = true;
      const reply = (r: w.ProcessorReply): void => {
        if (!stream.ended) call.write(r);
      };
      call.on('data', (m: w.ProcessorCall) => {
        const id = Number(m.callId);
        if (m.call === 'cancel') {
          stream.open.get(id)?.abort();
          return;
        }
        if (stream.open.has(id)) return;
        const withdrawn = new AbortController();
        const answer =
          m.call === 'submit'
            ? this.serve(m.submit, submitRpc, withdrawn.signal).then((res): w.ProcessorReply => ({
                callId: id,
                reply: 'submit',
                submit: res,
              }))
            : m.call === 'getOutput'
              ? this.serve(m.getOutput, getOutputRpc, withdrawn.signal).then((res): w.ProcessorReply => ({
                  callId: id,
                  reply: 'getOutput',
                  getOutput: res,
                }))
              : Promise.reject(new StreamCallError(grpc.status.INVALID_ARGUMENT, 'a call with no request'));
        stream.open.set(id, withdrawn);
        answer
          .then(reply, (err: Error) =>
            reply({
              callId: id,
              reply: 'status',
              status: {
                code: err instanceof StreamCallError ? err.code : grpc.status.INTERNAL,
                message: err.message,
              },
            }),
          )
          .finally(() => {
            stream.open.delete(id);
            if (stream.ending) stream.end();
          });
      });
      // The ingress went away (or the connection broke): its calls are withdrawn.
      const gone = (): void => {
        if (stream.ended) return;
        stream.ended = true;
        this.callStreams.delete(stream);
        for (const withdrawn of stream.open.values()) withdrawn.abort();
      };
      call.on('cancelled', gone);
      call.on('error', gone);
      call.on('end', () => {
        stream.ending = true;
        stream.end();
      });
    };
    const subscribe: grpc.handleServerStreamingCall<w.SubscribeRequest, w.IngressNotification> = (call) => {
      const id = call.request.ingressId;
      let set = this.subscriptions.get(id);
      if (!set) this.subscriptions.set(id, (set = new Set()));
      set.add(call);
      const remove = (): void => {
        set.delete(call);
        if (set.size === 0 && this.subscriptions.get(id) === set) this.subscriptions.delete(id);
      };
      call.on('cancelled', remove);
      call.on('close', remove);
      call.on('error', remove);
    };
    return { submit: unary(submitRpc), getOutput: unary(getOutputRpc), calls, subscribe };
  }
}
