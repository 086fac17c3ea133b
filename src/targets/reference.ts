// The reference cluster as a target, `reference` (fixed protocol) and `reference:legacy` (the
// seed's bug): one log server, N processors and the ingress(es) on a runtime (local child
// processes or containers, src/runtime/service-runtime.ts), every link through its own
// Toxiproxy proxy, so suites can hurt any one of them.
//
//   client ─[client->ingress]─▶ ingress ─[ingress->processor-N]─▶ processor-N ─[processor-N->log]─▶ log
//                                  └────────────[ingress->log]──────────────────────────────────▶ log
//
// Order: log; proxies to the log; the `ingress->processor-N` proxies (their listen address is
// each processor's --advertised-address); processors (then each proxy's upstream is set to the
// processor's real address); ingresses; `client->ingress` — the processors and ingresses start
// side by side once the log is up and every proxy exists. A restarted service gets new ports
// (port 0), so every start re-points the proxies that lead to it. The runner's control path
// (leaderOf, transferLeadership) talks to the log's controller directly, never through a proxy.
// Ready means every partition has a leader and each ingress answers a call end to end (unless
// the processors are deferred for clients-before-processors), so warm-up meets a serving system.
import type { Proxy } from 'toxiproxy-node-client';
import { createControllerClient, type ControllerClient } from '../protocol/grpc.js';
import { createCleanup } from '../runtime/cleanup.js';
import { createRuntime } from '../runtime/create-runtime.js';
import type { RuntimeChoice, RuntimeName, RuntimeService, ServiceSpec } from '../runtime/service-runtime.js';
import { httpProbe, waitFor } from '../util/wait.js';
import {
  referenceProfile,
  type StartedTarget,
  type Target,
  type TargetContext,
  type Topology,
} from './target.js';
import type { ServiceLevels } from '../checkers/service-levels.js';

import type { Protocol } from '../protocol/names.js';

export type { Protocol } from '../protocol/names.js';

const PLACEHOLDER_UPSTREAM = '127.0.0.1:1';

export function linkNames(topology: Topology): string[] {
  const ingresses = topology.ingresses ?? 1;
  const names: string[] = [];
  for (let j = 1; j <= ingresses; j++)
    names.push(ingresses === 1 ? 'client->ingress' : `client->ingress-${j}`);
  names.push('ingress->log');
  for (let i = 1; i <= topology.processors; i++) names.push(`ingress->processor-${i}`, `processor-${i}->log`);
  return names;
}

/**
 * The reference cluster's service levels, derived from its settings (the services' defaults;
 * test/targets/reference-slo.test.ts holds the two in step):
 * - failover: the controller declares a silent leader dead after its failure timeout (700 ms),
 *   the new leader's lease and recovery take up to one lease (500 ms), and the ingress resends
 *   with a backoff capped at 1000 ms; 1500 ms more for a machine whose two cores also run the
 *   load generator, the proxy and every other service (measured: up to 3.2 s there).
 * - tail during a fault, net of what the fault imposes: one resend backoff at its cap
 *   (1000 ms) after one failure detection (700 ms), plus 300 ms.
 * - recovery after a heal: a connection that lost bytes to the fault is found dead by keepalive
 *   (a ping after 1000 ms, unanswered for 2000 ms), then a reconnect and a resend, each at most
 *   one backoff cap (1000 ms: gRPC's reconnect backoff and the ingress's resend backoff), plus
 *   500 ms for the answer.
 * - an op crosses a slowed link at most 3 times in sequence (its invoke's append, its end's
 *   append, the leader's read of them).
 */
export const referenceServiceLevels: ServiceLevels = {
  failoverMs: 700 + 500 + 1000 + 1500,
  p99DuringFaultMs: 1000 + 700 + 300,
  recoveryAfterHealMs: 1000 + 2000 + 1000 + 1000 + 500,
  latencyCrossings: 3,
  // A leader paused or partitioned keeps its connections open: keepalive finds them dead (a
  // ping after 1000 ms, unanswered for 2000 ms).
  silentPeerDetectionMs: 1000 + 2000,
  basis: 'derived from the reference cluster’s failure timeout, lease, keepalive and backoff settings',
};

export function referenceTarget(
  protocol: Protocol,
  runtime: RuntimeName | RuntimeChoice = 'local',
  bugs: readonly string[] = [],
): Target {
  const choice = typeof runtime === 'string' ? { name: runtime } : runtime;
  const name =
    bugs.length > 0
      ? `reference+bug:${bugs.join(',')}`
      : protocol === 'rpc'
        ? 'reference'
        : 'reference:legacy';
  return {
    name,
    runtime: choice.name,
    profile: { ...referenceProfile, slo: referenceServiceLevels },
    start: (topology, ctx) => startReference(name, protocol, choice, topology, ctx, bugs),
  };
}

async function startReference(
  name: string,
  protocol: Protocol,
  choice: RuntimeChoice,
  topology: Topology,
  ctx: TargetContext,
  bugs: readonly string[],
): Promise<StartedTarget> {
  // Bug switches (src/services/bugs.ts) reach every service as --bugs; each acts on its own.
  const bugArgs = bugs.length > 0 ? ['--bugs', bugs.join(',')] : [];
  const cleanup = createCleanup();
  const readyTimeoutMs = ctx.readyTimeoutMs ?? 20_000;
  const env = ctx.env ?? process.env;
  const runtime = await createRuntime(choice);
  try {
    const tp = await runtime.toxiproxy(ctx.toxiproxyUrl, ctx.runDir, env, ctx.seed);
    cleanup.add('toxiproxy', () => tp.stop());
    const proxies = new Map<string, Proxy>();
    /** proxy name → the service it leads to, so a (re)started service re-points its proxies. */
    const leadsTo = new Map<string, string>();
    const makeProxy = async (name: string, service: string, upstream: string): Promise<Proxy> => {
      const p = await tp.client.createProxy({ name, listen: '127.0.0.1:0', upstream, enabled: true });
      proxies.set(name, p);
      leadsTo.set(name, service);
      cleanup.add(`proxy ${name}`, () => p.remove());
      return p;
    };
    const repoint = async (service: string, address: string): Promise<void> => {
      for (const [name, p] of proxies) {
        if (leadsTo.get(name) !== service) continue;
        proxies.set(name, await p.update({ enabled: true, listen: p.listen, upstream: address }));
      }
    };
    const services = new Map<string, RuntimeService>();
    /** Services started together once every proxy exists (they need only the log's address). */
    const together: RuntimeService[] = [];
    const addService = async (
      spec: Omit<ServiceSpec, 'env' | 'readyTimeoutMs'>,
      start: 'now' | 'together' | 'later',
    ): Promise<RuntimeService> => {
      const svc = runtime.service({ ...spec, env, readyTimeoutMs }, ctx.runDir, cleanup);
      services.set(spec.name, svc);
      if (start === 'now') await svc.start();
      else if (start === 'together') together.push(svc);
      return svc;
    };

    // log
    let logAddress = '';
    await addService(
      {
        name: 'log',
        role: 'log',
        args: [
          '--port',
          '0',
          '--metrics-port',
          '0',
          '--partitions',
          String(topology.partitions),
          ...(ctx.deferProcessors !== true ? ['--expect-processors', String(topology.processors)] : []),
          ...bugArgs,
        ],
        dataDir: true,
        onReady: async (ready) => {
          logAddress = ready.addresses['grpc'] ?? '';
          await repoint('log', logAddress);
        },
      },
      'together',
    );
    // The log starts with the others: its proxies lead nowhere until it is ready (onReady above).
    const ingressToLog = await makeProxy('ingress->log', 'log', PLACEHOLDER_UPSTREAM);

    // processors
    for (let i = 1; i <= topology.processors; i++) {
      const node = `processor-${i}`;
      const toLog = await makeProxy(`${node}->log`, 'log', PLACEHOLDER_UPSTREAM);
      const advertised = await makeProxy(`ingress->${node}`, node, PLACEHOLDER_UPSTREAM);
      const processor = await addService(
        {
          name: node,
          role: 'processor',
          args: [
            '--node',
            node,
            '--log-address',
            toLog.listen,
            '--port',
            '0',
            '--metrics-port',
            '0',
            '--advertised-address',
            advertised.listen,
            '--protocol',
            protocol,
            ...bugArgs,
          ],
          onReady: (ready) => repoint(node, ready.addresses['grpc'] ?? PLACEHOLDER_UPSTREAM),
        },
        ctx.deferProcessors !== true ? 'together' : 'later',
      );
      // A processor keeps no data dir: its state is rebuilt from the log at every start, so a
      // restart that loses its data is a restart (the log, the only copy, is never offered).
      processor.restartWithoutData = () => processor.restart();
    }

    // ingresses
    const ingresses = topology.ingresses ?? 1;
    const ingressUrls: string[] = [];
    for (let j = 1; j <= ingresses; j++) {
      const node = `ingress-${j}`;
      const client = await makeProxy(
        ingresses === 1 ? 'client->ingress' : `client->${node}`,
        node,
        PLACEHOLDER_UPSTREAM,
      );
      ingressUrls.push(`http://${client.listen}`);
      await addService(
        {
          name: node,
          role: 'ingress',
          args: [
            '--node',
            node,
            '--log-address',
            ingressToLog.listen,
            '--port',
            '0',
            '--metrics-port',
            '0',
            '--protocol',
            protocol,
            ...bugArgs,
          ],
          onReady: (ready) =>
            repoint(node, (ready.addresses['http'] ?? '').replace(/^https?:\/\//, '').replace(/\/.*$/, '')),
        },
        'together',
      );
    }
    // The log, processors and ingresses start side by side (each finds the others through the
    // log's partition table and the proxies, re-pointed as each one is ready); all settle
    // before a failure is reported, so the cleanup never races a start still under way.
    const settled = await Promise.allSettled(together.map((s) => s.start()));
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;

    let controller: ControllerClient | undefined;
    let controllerAddress = '';
    const control = (): ControllerClient => {
      if (controller === undefined || controllerAddress !== logAddress) {
        controller?.close();
        controller = createControllerClient(logAddress);
        controllerAddress = logAddress;
      }
      return controller;
    };
    cleanup.add('controller client', () => Promise.resolve(controller?.close()));
    const leaderOf = async (partition: number): Promise<string | undefined> => {
      const table = await control().getPartitionTable({}, { timeoutMs: 3000 });
      const node = table.partitions.find((a) => a.partition === partition)?.leaderNode;
      return node === undefined || node === '' ? undefined : node;
    };
    const waitForLeaders = (): Promise<true> =>
      waitFor(
        async () => {
          const table = await control().getPartitionTable({}, { timeoutMs: 2000 });
          return (
            table.partitions.length >= topology.partitions &&
            table.partitions.every((a) => a.leaderNode !== '')
          );
        },
        { what: 'every partition has a leader', timeoutMs: readyTimeoutMs, intervalMs: 25 },
      );
    /** Serving means answering a call end to end; each probe is bounded and abandoned on timeout. */
    const waitForService = (url: string): Promise<true> =>
      waitFor(
        httpProbe(`${url}/Echo/echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ probe: 'ready' }),
        }),
        { what: `${url} answers a call`, timeoutMs: readyTimeoutMs, intervalMs: 25 },
      );
    if (ctx.deferProcessors !== true) {
      await waitForLeaders();
      for (const url of ingressUrls) await waitForService(url);
    }

    const links: Record<string, string> = {};
    const linkKinds: Record<string, string> = {};
    for (const name of linkNames(topology)) {
      links[name] = name;
      // The workload's links, the ingress's calls to processors, and every link to the log.
      linkKinds[name] = name.startsWith('client->') ? 'client' : name.endsWith('->log') ? 'storage' : 'peer';
    }
    const started: StartedTarget = {
      name,
      runtime: choice.name,
      toxiproxyDescription: tp.description ?? 'Toxiproxy',
      ingressUrls,
      links,
      linkKinds,
      toxiproxy: tp.client,
      toxiproxyUrl: tp.url,
      services,
      extraMetricsUrls: () => ({ toxiproxy: `${tp.url.replace(/\/$/, '')}/metrics` }),
      leaderOf,
      transferLeadership: async (partition, node) => {
        await control().transferLeadership({ partition, node }, { timeoutMs: 5000 });
      },
      startProcessors: async () => {
        for (const s of services.values()) if (s.role === 'processor' && !s.isRunning()) await s.start();
      },
      stop: () => cleanup.runAll(),
      [Symbol.asyncDispose]: () => cleanup.runAll(),
    };
    return started;
  } catch (err) {
    await cleanup.runAll();
    throw err;
  }
}
