// The reference cluster as a target, `reference` (fixed protocol) and `reference:legacy` (the
// seed's bug): one log server, N processors and the ingress(es) as local child processes,
// every link through its own Toxiproxy proxy, so suites can hurt any one of them.
//
//   client ─[client->ingress]─▶ ingress ─[ingress->processor-N]─▶ processor-N ─[processor-N->log]─▶ log
//                                  └────────────[ingress->log]──────────────────────────────────▶ log
//
// Order: log; proxies to the log; the `ingress->processor-N` proxies (their listen address is
// each processor's --advertised-address); processors (then each proxy's upstream is set to the
// processor's real address); ingresses; `client->ingress`. A restarted service gets new ports
// (port 0), so every start re-points the proxies that lead to it. The runner's control path
// (leaderOf, transferLeadership) talks to the log's controller directly, never through a proxy.
// Ready means every partition has a leader and each ingress answers a call end to end (unless
// the processors are deferred for clients-before-processors), so warm-up meets a serving system.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Proxy } from 'toxiproxy-node-client';
import { createControllerClient, type ControllerClient } from '../protocol/grpc.js';
import { createCleanup } from '../runtime/cleanup.js';
import { createLocalService, type LocalService, type LocalServiceSpec } from '../runtime/local.js';
import { startLimboService, type StartedProcess } from '../runtime/process.js';
import { TimeoutError } from '../util/errors.js';
import { openToxiproxy } from './toxiproxy-server.js';
import type { StartedTarget, Target, TargetContext, Topology } from './target.js';

export type Protocol = 'rpc' | 'legacy';

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

export function referenceTarget(protocol: Protocol): Target {
  return {
    name: protocol === 'rpc' ? 'reference' : 'reference:legacy',
    start: (topology, ctx) => startReference(protocol, topology, ctx),
  };
}

async function startReference(
  protocol: Protocol,
  topology: Topology,
  ctx: TargetContext,
): Promise<StartedTarget> {
  const cleanup = createCleanup();
  const readyTimeoutMs = ctx.readyTimeoutMs ?? 20_000;
  const env = ctx.env ?? process.env;
  try {
    const tp = await openToxiproxy(ctx.toxiproxyUrl, { env });
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
    /** A started process whose proxies cannot be re-pointed is useless: kill it rather than leak it. */
    const repointOrKill = async (p: StartedProcess, service: string, address: string): Promise<void> => {
      try {
        await repoint(service, address);
      } catch (err) {
        p.kill('SIGKILL');
        await p.exited;
        throw err;
      }
    };
    const services = new Map<string, LocalService>();
    const addService = async (spec: LocalServiceSpec, startNow: boolean): Promise<LocalService> => {
      const svc = createLocalService(spec, ctx.runDir, cleanup);
      services.set(spec.name, svc);
      cleanup.add(`service ${spec.name}`, () => svc.stop());
      if (startNow) await svc.start();
      return svc;
    };

    // log
    let logAddress = '';
    await addService(
      {
        name: 'log',
        role: 'log',
        start: async (logFile) => {
          const p = await startLimboService(
            'log',
            [
              '--data-dir',
              join(ctx.runDir, 'data', 'log'),
              '--port',
              '0',
              '--metrics-port',
              '0',
              '--partitions',
              String(topology.partitions),
              '--failure-timeout-ms',
              '1500',
            ],
            { name: 'log', logFile, env, readyTimeoutMs },
          );
          logAddress = p.ready.addresses['grpc'] ?? '';
          await repointOrKill(p, 'log', logAddress);
          return p;
        },
      },
      true,
    );
    mkdirSync(join(ctx.runDir, 'data'), { recursive: true });
    const ingressToLog = await makeProxy('ingress->log', 'log', logAddress);

    // processors
    for (let i = 1; i <= topology.processors; i++) {
      const node = `processor-${i}`;
      const toLog = await makeProxy(`${node}->log`, 'log', logAddress);
      const advertised = await makeProxy(`ingress->${node}`, node, PLACEHOLDER_UPSTREAM);
      await addService(
        {
          name: node,
          role: 'processor',
          start: async (logFile) => {
            const p = await startLimboService(
              'processor',
              [
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
              ],
              { name: node, logFile, env, readyTimeoutMs },
            );
            await repointOrKill(p, node, p.ready.addresses['grpc'] ?? PLACEHOLDER_UPSTREAM);
            return p;
          },
        },
        ctx.deferProcessors !== true,
      );
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
          start: async (logFile) => {
            const p = await startLimboService(
              'ingress',
              [
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
              ],
              { name: node, logFile, env, readyTimeoutMs },
            );
            const http = (p.ready.addresses['http'] ?? '').replace(/^https?:\/\//, '').replace(/\/.*$/, '');
            await repointOrKill(p, node, http);
            return p;
          },
        },
        true,
      );
    }

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
    const waitForLeaders = async (): Promise<void> => {
      const deadline = Date.now() + readyTimeoutMs;
      for (;;) {
        try {
          const table = await control().getPartitionTable({}, { timeoutMs: 2000 });
          if (
            table.partitions.length >= topology.partitions &&
            table.partitions.every((a) => a.leaderNode !== '')
          )
            return;
        } catch {
          // the controller may still be starting
        }
        if (Date.now() > deadline)
          throw new TimeoutError(`not every partition had a leader within ${readyTimeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    /** Serving means answering a call end to end; each probe is bounded and abandoned on timeout. */
    const waitForService = async (url: string): Promise<void> => {
      const deadline = Date.now() + readyTimeoutMs;
      for (let n = 0; ; n++) {
        try {
          const res = await fetch(`${url}/Echo/echo`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ probe: n }),
            signal: AbortSignal.timeout(1500),
          });
          await res.arrayBuffer();
          if (res.status === 200) return;
        } catch {
          // not serving yet
        }
        if (Date.now() > deadline)
          throw new TimeoutError(`${url} did not answer a call within ${readyTimeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    if (ctx.deferProcessors !== true) {
      await waitForLeaders();
      for (const url of ingressUrls) await waitForService(url);
    }

    const links: Record<string, string> = {};
    for (const name of linkNames(topology)) links[name] = name;
    const started: StartedTarget = {
      name: protocol === 'rpc' ? 'reference' : 'reference:legacy',
      ingressUrls,
      links,
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
