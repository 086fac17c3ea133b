// The ingress's metrics (docs/architecture.md#metrics), registered on the instance's own registry.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { metricNames as m, referenceMetricNames as rm, type ResendReason } from '../../protocol/names.js';

export type IngressMetrics = ReturnType<typeof createIngressMetrics>;

export const requestKinds = ['call', 'send', 'attach', 'output'] as const;
export type RequestKind = (typeof requestKinds)[number];

/**
 * Where a request was when its client closed the connection before the answer: its body not
 * yet read (`receiving`), waiting for the partition table (`routing`), handed to a processor
 * (`processor`: submitted, or waiting for an output; the processor's call is cancelled), or
 * answered with part of the answer still waiting for the client to read it (`answering`).
 */
export const clientGoneStages = ['receiving', 'routing', 'processor', 'answering'] as const;
export type ClientGoneStage = (typeof clientGoneStages)[number];

/** The bounds a request can be refused by before any work (503 with retry-after). */
export const refusalLimits = ['max_pending', 'shutting_down'] as const;
export type RefusalLimit = (typeof refusalLimits)[number];

/** Requests whose client went away before the answer, by kind and stage. */
export const INGRESS_CLIENT_GONE_TOTAL = 'limbo_ingress_client_gone_total';
/** Requests refused by a bound (503 with retry-after), by kind and limit. */
export const INGRESS_REFUSED_TOTAL = 'limbo_ingress_refused_total';
/** Answers whose bytes the client's connection did not take at once, by kind. */
export const INGRESS_RESPONSE_WRITE_WAITS_TOTAL = rm.ingressResponseWriteWaitsTotal;
/** Answers still waiting for their client to take their bytes, by kind. */
export const INGRESS_RESPONSES_WAITING_FOR_CLIENT = rm.ingressResponsesWaitingForClient;

const resendReasons: readonly ResendReason[] = [
  'timeout',
  'connection_lost',
  'not_leader',
  'lost_leadership',
  'unavailable',
];

/**
 * `partitions` (the partitions of the current partition table) gives every partition's resend
 * counters a 0 from the start, so "no resends" (the legacy protocol never resends) shows as 0
 * on a dashboard rather than as no data.
 */
export function createIngressMetrics(
  registry: Registry,
  oldestPendingSeconds: () => number,
  partitions: () => readonly number[] = () => [],
) {
  const registers = [registry];
  const metrics = {
    requests: new Counter({
      name: m.ingressRequestsTotal,
      help: 'Client requests finished',
      labelNames: ['kind', 'outcome'],
      registers,
    }),
    pending: new Gauge({
      name: m.ingressPendingRequests,
      help: 'Client requests not yet answered',
      labelNames: ['kind'],
      registers,
    }),
    oldestPending: new Gauge({
      name: m.ingressOldestPendingSeconds,
      help: 'Age of the oldest unanswered client request',
      registers,
      collect() {
        this.set(oldestPendingSeconds());
      },
    }),
    duration: new Histogram({
      name: m.ingressRequestDurationSeconds,
      help: 'Client-visible latency',
      labelNames: ['kind', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    rpcAttempts: new Counter({
      name: m.ingressRpcAttemptsTotal,
      help: 'Every attempt to a processor',
      labelNames: ['partition', 'rpc', 'result'],
      registers,
    }),
    resends: new Counter({
      name: m.ingressResendsTotal,
      help: 'Resends of a request to a processor, by reason',
      labelNames: ['partition', 'reason'],
      registers,
      collect() {
        for (const p of partitions())
          for (const reason of resendReasons) this.inc({ partition: String(p), reason }, 0);
      },
    }),
    // With the resends, these give a resend rate per resending request (resendRateBounded):
    // the requests resending at a moment plus those that began since are every request that
    // can have resent in between, however briefly each one resent.
    resending: new Gauge({
      name: m.ingressResendingRequests,
      help: 'Requests to a processor between their first failed attempt and their answer',
      labelNames: ['partition'],
      registers,
      collect() {
        for (const p of partitions()) this.inc({ partition: String(p) }, 0);
      },
    }),
    resentRequests: new Counter({
      name: m.ingressResentRequestsTotal,
      help: 'Requests to a processor that needed at least one resend',
      labelNames: ['partition'],
      registers,
      collect() {
        for (const p of partitions()) this.inc({ partition: String(p) }, 0);
      },
    }),
    // A client that gives up shows here (and as requests_total{outcome="aborted"}); the stage
    // says how far its request had gone. The ingress's own stop is not counted.
    clientGone: new Counter({
      name: INGRESS_CLIENT_GONE_TOTAL,
      help: 'Client requests whose client closed the connection before the answer, by where the request was',
      labelNames: ['kind', 'stage'],
      registers,
    }),
    // Load shed at the door: more than --max-pending requests pending, or the ingress stopping.
    refused: new Counter({
      name: INGRESS_REFUSED_TOTAL,
      help: 'Client requests refused by a bound before any work (503 with retry-after), by limit',
      labelNames: ['kind', 'limit'],
      registers,
    }),
    // A client that does not read its answer (a slow reader, a stalled peer): the kernel's
    // socket buffers took only part of the answer, the rest waits in the ingress for the
    // client. An answer that fits the buffers never counts, however slowly it is read.
    responseWriteWaits: new Counter({
      name: INGRESS_RESPONSE_WRITE_WAITS_TOTAL,
      help: 'Client answers whose bytes the connection did not take at once: the write waited for the client',
      labelNames: ['kind'],
      registers,
    }),
    responsesWaitingForClient: new Gauge({
      name: INGRESS_RESPONSES_WAITING_FOR_CLIENT,
      help: 'Client answers written in part, waiting for their client to read the rest',
      labelNames: ['kind'],
      registers,
    }),
  };
  for (const kind of requestKinds) {
    metrics.pending.set({ kind }, 0);
    metrics.responsesWaitingForClient.set({ kind }, 0);
    metrics.responseWriteWaits.inc({ kind }, 0);
    for (const stage of clientGoneStages) metrics.clientGone.inc({ kind, stage }, 0);
    for (const limit of refusalLimits) metrics.refused.inc({ kind, limit }, 0);
  }
  return metrics;
}
