// NATS JetStream (Debian's nats-server) as a limbo target, declared, with its own client:
// three servers on 127.0.0.1 in one cluster, one stream replicated on all three, and the
// workload speaking NATS through the npm `nats` client (a client adapter, no HTTP gateway).
//
//   client ─[client->nats-N]─▶ nats-N client port       (N = 1..3: each client sticks to one)
//   nats-M ─[nats-M->nats-N]─▶ nats-N cluster port      (M < N: one link per pair)
//
// NATS keeps one route per pair of servers, dialled from either side (a second one is closed
// as a duplicate), so with both sides dialling, which of a pair's two proxies carries the
// route is chance, and a shared proxy into N (`*->nats-N`) carries nothing for the pairs whose
// route N dialled itself. Here the lower-numbered server of each pair dials the other and
// nobody else does, so every route runs through the one link of its pair and a fault on that
// link always meets it. Clients stick to their link (no cluster gossip), servers advertise no
// client addresses and no usable cluster address, so nothing goes around the proxies.
import { defineClientAdapter, defineTarget, type PerformResult, type ServiceDeclaration } from 'limbo';
import {
  connect,
  RequestStrategy,
  type JetStreamClient,
  type JetStreamManager,
  type NatsConnection,
  type StreamInfo,
} from 'nats';

const SERVERS = [1, 2, 3];
const STREAM = 'LIMBO';

/** The one R3 stream, made by the first op that finds it missing (the readiness probe's call). */
async function makeStream(jsm: JetStreamManager): Promise<void> {
  try {
    await jsm.streams.info(STREAM);
  } catch (err) {
    if (!/not found/i.test(String(err))) throw err;
    await jsm.streams.add({
      name: STREAM,
      subjects: ['limbo.>'],
      num_replicas: 3,
      duplicate_window: 120_000_000_000,
    });
  }
}

/**
 * The workload's ops as JetStream publishes and reads. A call (or send) publishes to
 * `limbo.call.<idempotency key>` with the key as the message id, so JetStream's duplicate
 * window makes a retry with the same key count once; an attach reads that subject's last
 * message; a counter add publishes its delta as `limbo.counter.<counter>.<key>.<delta>`; a
 * counter reads as the sum of the deltas of its subjects, each subject counted as often as
 * the stream holds it (a duplicate that slipped past deduplication counts twice, as it should).
 */
const jetstream = defineClientAdapter({
  name: 'nats-jetstream',
  invocationIdFor: (_target, key) => (key === undefined ? undefined : `nats:${key}`),
  connect: async ({ address }) => {
    const nc: NatsConnection = await connect({
      servers: address,
      // Only ever this link: no server learnt from gossip, no direct address around the proxy.
      ignoreClusterUpdates: true,
      noRandomize: true,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 200,
      timeout: 2000,
    });
    // No account check at connect: a session opens while JetStream has no meta leader, too.
    const jsm: JetStreamManager = await nc.jetstreamManager({ timeout: 5000, checkAPI: false });
    const js: JetStreamClient = nc.jetstream({ timeout: 5000 });
    // A new cluster has no stream yet: the first write answered "no responders" on a session
    // that has not seen the stream makes it (bounded), for the next op; after that, nothing.
    const maker: JetStreamManager = await nc.jetstreamManager({ timeout: 1000, checkAPI: false });
    let streamSeen = false;
    const unknownOrFail = async (err: unknown): Promise<PerformResult> => {
      const e = err as { code?: string; message?: string };
      // 503 "no responders": no stream leader took the message, it was not stored.
      if (e.code === '503') {
        if (!streamSeen) await makeStream(maker).catch(() => undefined);
        return { outcome: 'fail', error: `no responders: ${e.message ?? ''}` };
      }
      return { outcome: 'unknown', error: `${e.code ?? ''} ${e.message ?? String(err)}`.trim() };
    };
    return {
      async perform(op, ctx): Promise<PerformResult> {
        // The nats client's own default request timeout, as its users run it (bounded by limbo's).
        const timeout = Math.min(5000, ctx.timeoutMs);
        try {
          const result = await performOp();
          if (result.outcome === 'ok') streamSeen = true;
          return result;
        } catch (err) {
          return unknownOrFail(err);
        }

        async function performOp(): Promise<PerformResult> {
          switch (op.op) {
            case 'call':
            case 'send': {
              const key = op.idempotencyKey ?? `anon-${Math.random().toString(36).slice(2)}`;
              const ack = await js.publish(`limbo.call.${key}`, JSON.stringify(op.body ?? null), {
                msgID: key,
                timeout,
              });
              return {
                outcome: 'ok',
                invocationId: `nats:${key}`,
                // The stored message's sequence: a retry deduplicated gets the same one.
                answer: { seq: ack.seq },
              };
            }
            case 'attach': {
              const key = (op.invocationId ?? '').replace(/^nats:/, '');
              const m = await jsm.streams.getMessage(STREAM, { last_by_subj: `limbo.call.${key}` });
              return { outcome: 'ok', invocationId: op.invocationId ?? '', answer: { seq: m.seq } };
            }
            case 'counterAdd': {
              const key = op.idempotencyKey ?? `anon-${Math.random().toString(36).slice(2)}`;
              const delta = (op.body as { delta: number }).delta;
              const ack = await js.publish(`limbo.counter.${op.target.key}.${key}.${delta}`, '', {
                msgID: `counter-${key}`,
                timeout,
              });
              return {
                outcome: 'ok',
                invocationId: `nats:${key}`,
                // The stored message's sequence: a retry deduplicated gets the same one.
                answer: { seq: ack.seq },
              };
            }
            case 'counterGet': {
              // Stream info may be answered by a member whose copy is behind the leader's (seen
              // after a partition heals: two answers at one moment, one missing half the
              // stream). A write first, then only an answer that holds it counts: a read that
              // sees everything acknowledged before it began.
              // A read has no effect, so it is asked again while no stream leader answers
              // ("no responders": JetStream is still settling after a fault), within its time.
              // Its own deadline a little inside limbo's, so a read that cannot finish says why.
              const deadline = Date.now() + timeout - 300;
              let barrier;
              for (let asks = 1; ; asks++) {
                try {
                  barrier = await js.publish('limbo.barrier', '', {
                    timeout: Math.max(100, deadline - Date.now()),
                  });
                  break;
                } catch (err) {
                  const e = err as { code?: string; message?: string };
                  if (e.code !== '503' || Date.now() >= deadline || ctx.signal.aborted)
                    return {
                      outcome: 'fail',
                      error: `the read's barrier was not acknowledged (${asks} ask(s), last: ${e.code ?? ''} ${e.message ?? String(err)})`,
                    };
                  await new Promise((r) => setTimeout(r, 100));
                }
              }
              // Every member of the stream's group may answer a stream-info request; all answers
              // in a short window are taken and the freshest one that holds the barrier counts.
              let behind = 0;
              let freshest = 0;
              for (;;) {
                const replies = await nc.requestMany(
                  `$JS.API.STREAM.INFO.${STREAM}`,
                  JSON.stringify({ subjects_filter: `limbo.counter.${op.target.key}.>` }),
                  {
                    strategy: RequestStrategy.Timer,
                    maxWait: Math.min(500, Math.max(50, deadline - Date.now())),
                  },
                );
                let best: StreamInfo | undefined;
                for await (const m of replies) {
                  const info = m.json<StreamInfo>();
                  const seq = info.state?.last_seq ?? 0;
                  freshest = Math.max(freshest, seq);
                  if (seq >= barrier.seq && (best === undefined || seq > best.state.last_seq)) best = info;
                }
                if (best !== undefined) {
                  const subjects = best.state.subjects ?? {};
                  let value = 0;
                  for (const [subject, count] of Object.entries(subjects))
                    value += Number(subject.slice(subject.lastIndexOf('.') + 1)) * count;
                  return { outcome: 'ok', value, answer: { subjects: Object.keys(subjects).length, behind } };
                }
                behind++;
                if (Date.now() >= deadline || ctx.signal.aborted)
                  return {
                    outcome: 'fail',
                    error: `no stream info answer held the read's own write in ${behind} asks (freshest last sequence ${freshest} < ${barrier.seq})`,
                  };
                await new Promise((r) => setTimeout(r, 50));
              }
            }
          }
        }
      },
      close: () => nc.close(),
    };
  },
});

const server = (n: number): ServiceDeclaration => ({
  name: `nats-${n}`,
  role: 'processor',
  command: 'nats-server',
  ports: ['client', 'cluster', 'monitor'],
  dataDir: 'keep',
  args: [
    '--jetstream',
    '--store_dir={{dataDir}}',
    `--server_name=nats-${n}`,
    '--addr=127.0.0.1',
    '--port={{port:client}}',
    '--http_port={{port:monitor}}',
    '--cluster=nats://127.0.0.1:{{port:cluster}}',
    '--cluster_name=limbo',
    // Each pair's route is dialled by the lower-numbered server only, through that pair's link.
    // Its own address is listed too (a server drops a route to itself): JetStream refuses to
    // start a clustered server with no configured route, the highest-numbered one included.
    `--routes=${[
      'nats-route://127.0.0.1:{{port:cluster}}',
      ...SERVERS.filter((m) => m > n).map((m) => `nats-route://{{link:nats-${n}->nats-${m}}}`),
    ].join(',')}`,
    '--no_advertise=true',
    // A server that hears of another through gossip dials it at its advertised cluster address
    // (an implicit route) — directly, around the proxies, and the explicit route through the
    // pair's link is then closed as a duplicate. Advertising a port nobody listens on leaves
    // only the explicit routes.
    '--cluster_advertise=127.0.0.1:1',
  ],
  // JetStream is up once /healthz says so (its meta group may still be electing: the probe waits).
  ready: { http: 'http://127.0.0.1:{{port:monitor}}/healthz', bodyIncludes: 'ok' },
});

export default defineTarget({
  name: 'nats',
  about:
    'A 3-server NATS JetStream 2.9 cluster (one R3 stream), clients through the nats npm client as a client adapter.',
  services: SERVERS.map(server),
  links: [
    ...SERVERS.map((n) => ({ from: 'client', to: `nats-${n}`, port: 'client', kind: 'client' })),
    ...SERVERS.flatMap((n) =>
      SERVERS.filter((m) => m > n).map((m) => ({
        from: `nats-${n}`,
        to: `nats-${m}`,
        port: 'cluster',
        kind: 'peer',
      })),
    ),
  ],
  client: { adapter: jetstream, maxRatePerSec: 200 },
  // The stream's leader, as each server sees it; the server that names itself leads.
  leadership: {
    http: { port: 'monitor', path: '/jsz?streams=true' },
    leaderWhen: { jsonPath: 'account_details.0.stream_detail.0.cluster.leader', equals: '{{name}}' },
  },
  // Who leads and when it changed come from the leadership probe above; the rest from /jsz.
  signals: {
    limbo_processor_applied_lsn: {
      json: 'http://127.0.0.1:{{port:monitor}}/jsz?streams=true',
      path: 'account_details.0.stream_detail.0.state.last_seq',
      note: "the stream's last sequence as each server holds it (a lagging replica shows lower)",
    },
    limbo_processor_leader_epoch: { missing: 'the stream group’s raft term is not exported' },
    limbo_ingress_pending_requests: {
      missing: 'nats-server has no gauge of JetStream publishes waiting for their acknowledgement',
    },
    limbo_processor_pending_rpcs: { missing: 'no count of proposals waiting to commit is exported' },
    limbo_ingress_resends_total: {
      missing: 'nothing resends: a publish is answered once, or times out in the client',
    },
    limbo_controller_leader_changes_total: {
      missing: 'the JetStream meta leader is not exported as a count of changes',
    },
  },
  inapplicableChecks: {
    noImpossibleErrors: 'the client adapter answers ok, fail or unknown: no HTTP statuses to judge',
  },

  readyTimeoutMs: 30_000,
});
