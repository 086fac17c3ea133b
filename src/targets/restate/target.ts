// The real Restate server as a target, `--target restate`: three nodes (every role on each:
// ingress, admin, worker, log server, metadata server), a Toxiproxy proxy in front of each
// node's fabric port and of each ingress, the SDK endpoint registered through a proxy.
//
//   client ─[client->ingress-N]─▶ node-N ingress                (one per node, N = 1..3)
//   node-M ─[*->node-N]─▶ node-N fabric                          (N's advertised address)
//   nodes  ─[server->service]─▶ SDK endpoint (service)           (the registered deployment URI)
//
// Links: `*->node-N` is everything that enters node N's fabric port from the cluster — other
// nodes' ingress→processor RPCs, log replication, metadata, gossip — because Restate has one
// advertised address per node, so Toxiproxy cannot tell its callers apart. A node reaches its
// own metadata server directly (selfMetadataDirect) so a cut on `*->node-N` spares that.
// Services: `node-1..3` (role processor: kill, pause, restart the whole restate-server),
// `service` (role endpoint: kill, pause; not restartable). leaderOf(partition) asks
// `restatectl partitions list` through the nodes' REAL fabric ports, never a proxy.
// Clients before processors: the cluster starts serving, then the clients-before-processors
// fault kills every node (-9) while the clients already call and starts them again on heal —
// a cold start of every partition processor with traffic waiting (Restate's processors and
// ingress live in one process, so "processors down, ingress up" does not exist here).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Proxy } from 'toxiproxy-node-client';
import { partitionLeadership } from '../../checkers/partition-leadership.js';
import { metricNames } from '../../protocol/names.js';
import { createCleanup } from '../../runtime/cleanup.js';
import { silentLogger } from '../../telemetry/logger.js';
import { restateClientApi } from '../../workload/client-api.js';
import { openToxiproxy } from '../../runtime/toxiproxy.js';
import {
  TargetError,
  type ServiceHandle,
  type StartedTarget,
  type Target,
  type TargetProfile,
} from '../target.js';
import { startRestateCluster, type RestateNode } from './cluster.js';
import { invocationsByIdempotencyKey } from './invocations.js';
import { startLeadershipObserver } from './leadership-observer.js';
import { restateSignals } from './signals.js';
import { predicateProbe, waitFor } from '../../util/wait.js';
import { pidAlive } from '../../util/pid-alive.js';

/** Restate metrics a run keeps from the nodes' /metrics (the rest are RocksDB internals etc.). */
export const keptRestateMetrics: readonly string[] = [
  'restate_ingress_requests_total',
  'restate_invocation_client_requests_total',
  'restate_num_active_partition_leaders',
  'restate_failure_detector_nodes_total',
];

/** Well below the ~135 calls/s that saturate two cores with three nodes. */
export const RESTATE_MAX_OPS_PER_SEC = 40;

const NODES = 3;
const KILL_WAIT_MS = 5_000;

/** Signals the leadership observer derives, so they are not missing on this target. */
const derived = new Set<string>([
  metricNames.processorIsLeader,
  metricNames.processorLeaderEpoch,
  metricNames.processorLeadershipChangesTotal,
]);

export function restateMissingSignals(): Record<string, string> {
  const missing: Record<string, string> = {};
  for (const [name, m] of Object.entries(restateSignals))
    if (m.kind === 'missing' && !derived.has(name))
      missing[name] = `Restate 1.7 has no such metric: ${m.note}`;
  return missing;
}

export function restateLinkNames(nodes = NODES): string[] {
  const names: string[] = [];
  for (let i = 1; i <= nodes; i++) names.push(`client->ingress-${i}`);
  for (let i = 1; i <= nodes; i++) names.push(`*->node-${i}`);
  names.push('server->service');
  return names;
}

const hostPort = (url: string): string => new URL(url).host;

const waitGone = (what: string, gone: () => boolean): Promise<true> =>
  waitFor(predicateProbe(gone), {
    what: `${what} has exited after SIGKILL`,
    timeoutMs: KILL_WAIT_MS,
    intervalMs: 25,
  });

function nodeHandle(node: RestateNode): ServiceHandle {
  return {
    name: `node-${node.index}`,
    role: 'processor',
    isRunning: () => node.isRunning(),
    pid: () => node.pid(),
    metricsUrl: () => (node.isRunning() ? node.metricsUrl : undefined),
    kill: async () => {
      node.kill('SIGKILL');
      await waitGone(`node-${node.index}`, () => !node.isRunning());
    },
    pause: () => Promise.resolve(node.pause()),
    resume: () => Promise.resolve(node.resume()),
    restart: () => node.restart(),
    stop: () => node.stop(),
    lastStop: () => node.lastStop(),
  };
}

function endpointHandle(pid: number): ServiceHandle {
  const signal = (s: NodeJS.Signals): Promise<void> => {
    if (pidAlive(pid)) process.kill(pid, s);
    return Promise.resolve();
  };
  return {
    name: 'service',
    role: 'endpoint',
    isRunning: () => pidAlive(pid),
    pid: () => (pidAlive(pid) ? pid : undefined),
    metricsUrl: () => undefined,
    kill: async () => {
      await signal('SIGKILL');
      await waitGone('the service endpoint', () => !pidAlive(pid));
    },
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    restart: () =>
      Promise.reject(new TargetError('the restate service endpoint cannot be restarted (kill or pause it)')),
    stop: () => signal('SIGTERM'),
  };
}

const keptMetrics = new Set(keptRestateMetrics);

/** Restate's static profile: its own ingress API, the signals it lacks, its leadership check and rate cap. */
export const restateProfile: TargetProfile = {
  clientApi: restateClientApi,
  missingSignals: restateMissingSignals(),
  inapplicableChecks: {},
  keepMetric: (name) => keptMetrics.has(name),
  extraCheckers: [partitionLeadership()],
  workloadLimits: { maxRatePerSec: RESTATE_MAX_OPS_PER_SEC },
};

export function restateTarget(): Target {
  return {
    name: 'restate',
    profile: restateProfile,
    // Faults inside a service need limbo's fault hooks, which only the reference cluster runs;
    // a Restate node keeps the partition store it would rebuild, so no data-loss restart either.
    unsupported: (needs) => {
      const hook = needs.find((n) => n.kind === 'faultHook');
      if (hook !== undefined)
        return `restate runs no limbo fault hooks (${hook.hook} is a hook inside the reference cluster's services)`;
      if (needs.some((n) => n.kind === 'dataLoss'))
        return 'restate declares no node that may lose its data dir';
      return undefined;
    },
    async start(topology, ctx): Promise<StartedTarget> {
      const cleanup = createCleanup();
      const env = ctx.env ?? process.env;
      try {
        const tp = await openToxiproxy(ctx.toxiproxyUrl, {
          env,
          ...(ctx.seed !== undefined ? { seed: ctx.seed } : {}),
        });
        cleanup.add('toxiproxy', () => tp.stop());
        const proxies: Proxy[] = [];
        const makeProxy = async (name: string, upstream: string): Promise<Proxy> => {
          const p = await tp.client.createProxy({ name, listen: '127.0.0.1:0', upstream, enabled: true });
          proxies.push(p);
          cleanup.add(`proxy ${name}`, () => p.remove());
          return p;
        };
        const cluster = await startRestateCluster({
          nodes: NODES,
          partitions: topology.partitions,
          runDir: ctx.runDir,
          logger: silentLogger,
          selfMetadataDirect: true,
          advertise: async (node, real) =>
            `http://${(await makeProxy(`*->node-${node}`, hostPort(real))).listen}/`,
          serviceUri: async (real) => `http://${(await makeProxy('server->service', hostPort(real))).listen}`,
          ...(ctx.readyTimeoutMs !== undefined
            ? { readyTimeoutMs: Math.max(ctx.readyTimeoutMs, 60_000) }
            : {}),
        });
        cleanup.add('restate cluster', () => cluster.stop());
        const ingressUrls: string[] = [];
        for (const n of cluster.nodes)
          ingressUrls.push(
            `http://${(await makeProxy(`client->ingress-${n.index}`, hostPort(n.ingressUrl))).listen}`,
          );
        // Ready means a call succeeded through every client proxy too.
        await cluster.waitUntilServing(30_000, ingressUrls);

        const observer = await startLeadershipObserver({
          nodes: cluster.nodes,
          jsonlPath: join(ctx.runDir, 'leadership.jsonl'),
        });
        cleanup.add('leadership observer', () => observer.stop());

        const services = new Map<string, ServiceHandle>();
        for (const n of cluster.nodes) services.set(`node-${n.index}`, nodeHandle(n));
        services.set('service', endpointHandle(cluster.services.pid));
        const links: Record<string, string> = {};
        for (const name of restateLinkNames(NODES)) links[name] = name;
        const stop = (): Promise<void> => cleanup.runAll();
        const statuses = new Map<string, { status: string; source: string }>();
        return {
          name: 'restate',
          ingressUrls,
          links,
          toxiproxy: tp.client,
          toxiproxyUrl: tp.url,
          services,
          extraMetricsUrls: () => ({
            toxiproxy: `${tp.url.replace(/\/$/, '')}/metrics`,
            leadership: observer.metricsUrl,
          }),
          leaderOf: async (partition) => {
            const leader = (await cluster.partitionLeaders()).get(partition);
            return leader === undefined ? undefined : `node-${leader.nodeId}`;
          },
          transferLeadership: () =>
            Promise.reject(
              new TargetError('transfer-leadership is not available on restate (no restatectl command)'),
            ),
          startProcessors: async () => {
            for (const n of cluster.nodes) if (!n.isRunning()) await n.start();
          },
          resolveInvocationIds: async (keys) => {
            const live = cluster.nodes.filter((n) => n.isRunning() && !n.isPaused()).map((n) => n.adminUrl);
            const found = await invocationsByIdempotencyKey(live, keys);
            for (const v of found.values())
              statuses.set(v.id, { status: v.status, source: 'restate sys_invocation' });
            writeFileSync(
              join(ctx.runDir, 'restate-invocations.json'),
              JSON.stringify(Object.fromEntries(found), null, 2) + '\n',
            );
            return new Map([...found].map(([k, v]) => [k, v.id]));
          },
          serverInvocations: () => statuses,
          stop,
          [Symbol.asyncDispose]: stop,
        };
      } catch (err) {
        await cleanup.runAll();
        throw err;
      }
    },
  };
}
