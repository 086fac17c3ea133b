// etcd 3.4 (Debian's etcd-server package) as a limbo target, declared, not coded: three
// members on 127.0.0.1, every client link and every member's peer port behind a Toxiproxy
// proxy, clients through the gRPC-gateway's JSON API, leadership from
// /v3/maintenance/status, limbo's signals from etcd's own metrics.
//
//   client ─[client->etcd-N]─▶ etcd-N client port      (N = 1..3, the workload's ingresses)
//   etcd-M ─[*->etcd-N]──────▶ etcd-N peer port        (every member dials every other)
//
// Peer links are `*->etcd-N` (every dialer shares the proxy into N), not one per pair: a
// member's peer URLs are part of its member id (etcd hashes them with the cluster token), so
// every member must be given the same URL for N; etcd also dials both ways (each member
// streams from and posts to each other), so a cut into N stops N's inbound half only.
import { defineTarget, type ClientApi, type ClientOp, type HttpAnswer, type ServiceDeclaration } from 'limbo';

const MEMBERS = [1, 2, 3];

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string): string => Buffer.from(s, 'base64').toString('utf8');
/** The gateway's range_end for "every key with this prefix": the prefix with its last byte + 1. */
const prefixEnd = (prefix: string): string => {
  const bytes = Buffer.from(prefix, 'utf8');
  bytes[bytes.length - 1]! += 1;
  return bytes.toString('base64');
};

/**
 * The workload's ops as etcd requests. Idempotency by key naming: a call (or send) puts
 * `limbo/call/<idempotency key>`, a counter add puts `limbo/counter/<counter>/<idempotency key>`
 * with its delta, so a retry with the same key rewrites the same key and counts once; a counter
 * reads as the sum of its keys. An attach reads the sent key back.
 */
const etcdApi: ClientApi = {
  name: 'etcd-gateway',
  invocationIdFor: (_target, key) => (key === undefined ? undefined : `etcd:${key}`),
  callPath: () => '/v3/kv/put',
  sendPath: () => '/v3/kv/put',
  attachPath: () => '/v3/kv/range',
  idFrom: () => undefined,
  counterValue: (body) => {
    const b = body as { kvs?: { value?: string }[]; header?: unknown } | undefined;
    if (b?.header === undefined) return undefined;
    return (b.kvs ?? []).reduce((sum, kv) => sum + Number(unb64(kv.value ?? '')), 0);
  },
  request: (op: ClientOp) => {
    const key = op.idempotencyKey ?? `anon-${Math.random().toString(36).slice(2)}`;
    switch (op.op) {
      case 'call':
      case 'send':
        return {
          method: 'POST',
          path: '/v3/kv/put',
          body: { key: b64(`limbo/call/${key}`), value: b64(JSON.stringify(op.body)) },
        };
      case 'attach':
        return {
          method: 'POST',
          path: '/v3/kv/range',
          body: { key: b64(`limbo/call/${(op.invocationId ?? '').replace(/^etcd:/, '')}`) },
        };
      case 'counterAdd':
        return {
          method: 'POST',
          path: '/v3/kv/put',
          body: {
            key: b64(`limbo/counter/${op.target.key}/${key}`),
            value: b64(String((op.body as { delta: number }).delta)),
          },
        };
      case 'counterGet': {
        const prefix = `limbo/counter/${op.target.key}/`;
        // A linearizable read (the default): it goes through the leader's read index.
        return {
          method: 'POST',
          path: '/v3/kv/range',
          body: { key: b64(prefix), range_end: prefixEnd(prefix) },
        };
      }
    }
  },
  // A proposal that timed out or lost its leader may still commit: unknown, not failed.
  // "no leader" and the like were refused before any proposal: failed.
  outcome: (answer: HttpAnswer) => {
    if (answer.status >= 200 && answer.status < 300) return 'ok';
    const body = answer.body as { error?: unknown } | string | undefined;
    const message = typeof body === 'string' ? body : JSON.stringify(body?.error ?? body ?? '');
    if (/no leader|not capable|too many requests|key not found/.test(message)) return 'fail';
    if (answer.status >= 500) return 'unknown';
    return 'fail';
  },
};

const member = (n: number): ServiceDeclaration => ({
  name: `etcd-${n}`,
  role: 'processor',
  // Local runtime: Debian's etcd on PATH. Docker runtime: this image, the arguments below as
  // its command (scripts/docker/etcd-image.sh makes it from the same binary).
  command: 'etcd',
  image: process.env['LIMBO_ETCD_IMAGE'] ?? 'limbo/etcd:local',
  ports: ['client', 'peer'],
  dataDir: 'keep',
  args: [
    `--name=etcd-${n}`,
    '--data-dir={{dataDir}}',
    '--listen-client-urls=http://127.0.0.1:{{port:client}}',
    `--advertise-client-urls=http://{{link:client->etcd-${n}}}`,
    '--listen-peer-urls=http://127.0.0.1:{{port:peer}}',
    `--initial-advertise-peer-urls=http://{{link:*->etcd-${n}}}`,
    `--initial-cluster=${MEMBERS.map((m) => `etcd-${m}=http://{{link:*->etcd-${m}}}`).join(',')}`,
    '--initial-cluster-state=new',
    '--initial-cluster-token=limbo',
    // etcd's defaults (100 ms heartbeat, 1 s election timeout), written down so findings say what they ran with.
    '--heartbeat-interval=100',
    '--election-timeout=1000',
    '--logger=zap',
    '--log-outputs=stderr',
  ],
  // /health is true once this member has a leader and no alarm.
  ready: { http: 'http://127.0.0.1:{{port:client}}/health', bodyIncludes: '"health":"true"' },
  metrics: 'http://127.0.0.1:{{port:client}}/metrics',
});

export default defineTarget({
  name: 'etcd',
  about: 'A 3-member etcd 3.4 cluster (one raft group), clients through the gRPC-gateway JSON API.',
  services: MEMBERS.map(member),
  links: [
    ...MEMBERS.map((n) => ({ from: 'client', to: `etcd-${n}`, port: 'client' })),
    ...MEMBERS.map((n) => ({ from: '*', to: `etcd-${n}`, port: 'peer' })),
  ],
  // Two shared cores: enough load to keep every member busy, not to starve the machine.
  client: { api: etcdApi, maxRatePerSec: 200 },
  leadership: {
    http: { port: 'client', path: '/v3/maintenance/status', method: 'POST', body: {} },
    leaderWhen: { jsonPath: 'leader', equalsJsonPath: 'header.member_id' },
  },
  // transfer-leadership: `etcdctl move-leader` asked of the leader (its real client port, never
  // a proxy), the next member's id in hex taken from `member list` by its name. etcd-client's
  // etcdctl speaks the v3 API by default.
  leadershipTransfer: {
    command: 'sh',
    args: [
      '-c',
      'id=$(etcdctl --endpoints="$1" member list | awk -F", " -v name="$2" \'$3 == name { print $1 }\') && ' +
        'test -n "$id" && etcdctl --endpoints="$1" --command-timeout=5s move-leader "$id"',
      'move-leader',
      'http://{{leader:client}}',
      '{{next}}',
    ],
  },
  signals: {
    limbo_processor_is_leader: { metric: 'etcd_server_is_leader' },
    limbo_processor_leadership_changes_total: {
      metric: 'etcd_server_leader_changes_seen_total',
      note: 'leader changes each member has seen',
    },
    limbo_processor_pending_rpcs: {
      metric: 'etcd_server_proposals_pending',
      note: 'proposals waiting to commit on each member',
    },
    limbo_processor_rpcs_failed_total: { metric: 'etcd_server_proposals_failed_total' },
    limbo_processor_applied_lsn: {
      metric: 'etcd_server_proposals_applied_total',
      note: 'applied proposals, a counter that tracks the applied index',
    },
    limbo_log_appends_total: {
      metric: 'etcd_disk_wal_fsync_duration_seconds_count',
      note: 'WAL fsyncs (etcd batches entries into one fsync)',
    },
    limbo_processor_leader_epoch: {
      missing: 'the raft term is in /v3/maintenance/status (raftTerm), not a metric',
    },
    limbo_ingress_pending_requests: {
      missing:
        'etcd has no gauge of client requests in flight; the client history is the source of truth for hangs',
    },
    limbo_ingress_resends_total: {
      missing:
        'no ingress resends: a follower forwards proposals to the leader inside raft, and the gateway never resends',
    },
    limbo_controller_leader_changes_total: { missing: 'no controller: leadership is raft’s own' },
  },
  inapplicableChecks: {
    idempotentRetriesAgree:
      'etcd has no idempotency keys: a retried put rewrites the same key (the effect counts once) but answers with its own revision',
  },
});
