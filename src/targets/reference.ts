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
import { createControllerClient, type ControllerClient } from '../transport/grpc.js';
import { createCleanup } from '../runtime/cleanup.js';
import { createRuntime } from '../runtime/create-runtime.js';
import type {
  RuntimeChoice,
  RuntimeName,
  RuntimeService,
  ServiceRuntime,
  ServiceSpec,
} from '../runtime/service-runtime.js';
import type { ToxiproxyHandle } from '../runtime/toxiproxy.js';
import { httpProbe, waitFor } from '../util/wait.js';
import { UsageError } from '../util/errors.js';
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

function startReference(
  name: string,
  protocol: Protocol,
  choice: RuntimeChoice,
  topology: Topology,
  ctx: TargetContext,
  bugs: readonly string[],
): Promise<StartedTarget> {
  return new ReferenceStart(name, protocol, choice, topology, ctx, bugs).start();
}

/** `--max-pending` for the ingresses, checked before anything starts (exit 2 naming the field). */
function maxPendingArgs(v: number | undefined): string[] {
  if (v === undefined) return [];
  if (!Number.isInteger(v) || v < 1)
    throw new UsageError(`topology.ingressMaxPending must be a whole number ≥ 1, got ${String(v)}`);
  return ['--max-pending', String(v)];
}

/**
 * One start of the reference cluster, as named steps over its state: `openToxiproxy`, then
 * `addLog`, `addProcessors`, `addIngresses` (proxies made, services declared), `startTogether`,
 * `waitUntilServing`, and `started` (the handle). Anything that fails undoes what was started.
 */
class ReferenceStart {
  /** Bug switches (src/services/bugs.ts) reach every service as --bugs; each acts on its own. */
  readonly #bugArgs: string[];
  /** The suite's bound on each ingress's pending requests (topology.ingressMaxPending), if any. */
  readonly #maxPendingArgs: string[];
  readonly #cleanup = createCleanup();
  readonly #readyTimeoutMs: number;
  readonly #env: NodeJS.ProcessEnv;
  #runtime!: ServiceRuntime;
  #tp!: ToxiproxyHandle;
  readonly #proxies = new Map<string, Proxy>();
  /** proxy name → the service it leads to, so a (re)started service re-points its proxies. */
  readonly #leadsTo = new Map<string, string>();
  readonly #services = new Map<string, RuntimeService>();
  /** Services started together once every proxy exists (they need only the log's address). */
  readonly #together: RuntimeService[] = [];
  #logAddress = '';
  #ingressToLog!: Proxy;
  readonly #ingressUrls: string[] = [];
  #controller: ControllerClient | undefined;
  #controllerAddress = '';

  constructor(
    private readonly name: string,
    private readonly protocol: Protocol,
    private readonly choice: RuntimeChoice,
    private readonly topology: Topology,
    private readonly ctx: TargetContext,
    bugs: readonly string[],
  ) {
    this.#bugArgs = bugs.length > 0 ? ['--bugs', bugs.join(',')] : [];
    this.#maxPendingArgs = maxPendingArgs(topology.ingressMaxPending);
    this.#readyTimeoutMs = ctx.readyTimeoutMs ?? 20_000;
    this.#env = ctx.env ?? process.env;
  }

  async start(): Promise<StartedTarget> {
    this.#runtime = await createRuntime(this.choice);
    try {
      await this.#openToxiproxy();
      await this.#addLog();
      await this.#addProcessors();
      await this.#addIngresses();
      await this.#startTogether();
      this.#cleanup.add('controller client', () => Promise.resolve(this.#controller?.close()));
      if (this.ctx.deferProcessors !== true) await this.#waitUntilServing();
      return this.#started();
    } catch (err) {
      await this.#cleanup.runAll();
      throw err;
    }
  }

  async #openToxiproxy(): Promise<void> {
    const tp = await this.#runtime.toxiproxy(
      this.ctx.toxiproxyUrl,
      this.ctx.runDir,
      this.#env,
      this.ctx.seed,
    );
    this.#tp = tp;
    this.#cleanup.add('toxiproxy', () => tp.stop());
  }

  async #makeProxy(name: string, service: string, upstream: string): Promise<Proxy> {
    const p = await this.#tp.client.createProxy({ name, listen: '127.0.0.1:0', upstream, enabled: true });
    this.#proxies.set(name, p);
    this.#leadsTo.set(name, service);
    this.#cleanup.add(`proxy ${name}`, () => p.remove());
    return p;
  }

  async #repoint(service: string, address: string): Promise<void> {
    for (const [name, p] of this.#proxies) {
      if (this.#leadsTo.get(name) !== service) continue;
      this.#proxies.set(name, await p.update({ enabled: true, listen: p.listen, upstream: address }));
    }
  }

  async #addService(
    spec: Omit<ServiceSpec, 'env' | 'readyTimeoutMs'>,
    start: 'now' | 'together' | 'later',
  ): Promise<RuntimeService> {
    const svc = this.#runtime.service(
      { ...spec, env: this.#env, readyTimeoutMs: this.#readyTimeoutMs },
      this.ctx.runDir,
      this.#cleanup,
    );
    this.#services.set(spec.name, svc);
    if (start === 'now') await svc.start();
    else if (start === 'together') this.#together.push(svc);
    return svc;
  }

  async #addLog(): Promise<void> {
    const { topology, ctx } = this;
    await this.#addService(
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
          ...this.#bugArgs,
        ],
        dataDir: true,
        onReady: async (ready) => {
          this.#logAddress = ready.addresses['grpc'] ?? '';
          await this.#repoint('log', this.#logAddress);
        },
      },
      'together',
    );
    // The log starts with the others: its proxies lead nowhere until it is ready (onReady above).
    this.#ingressToLog = await this.#makeProxy('ingress->log', 'log', PLACEHOLDER_UPSTREAM);
  }

  async #addProcessors(): Promise<void> {
    for (let i = 1; i <= this.topology.processors; i++) {
      const node = `processor-${i}`;
      const toLog = await this.#makeProxy(`${node}->log`, 'log', PLACEHOLDER_UPSTREAM);
      const advertised = await this.#makeProxy(`ingress->${node}`, node, PLACEHOLDER_UPSTREAM);
      const processor = await this.#addService(
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
            this.protocol,
            ...this.#bugArgs,
          ],
          onReady: (ready) => this.#repoint(node, ready.addresses['grpc'] ?? PLACEHOLDER_UPSTREAM),
        },
        this.ctx.deferProcessors !== true ? 'together' : 'later',
      );
      // A processor keeps no data dir: its state is rebuilt from the log at every start, so a
      // restart that loses its data is a restart (the log, the only copy, is never offered).
      processor.restartWithoutData = () => processor.restart();
    }
  }

  async #addIngresses(): Promise<void> {
    const ingresses = this.topology.ingresses ?? 1;
    for (let j = 1; j <= ingresses; j++) {
      const node = `ingress-${j}`;
      const client = await this.#makeProxy(
        ingresses === 1 ? 'client->ingress' : `client->${node}`,
        node,
        PLACEHOLDER_UPSTREAM,
      );
      this.#ingressUrls.push(`http://${client.listen}`);
      await this.#addService(
        {
          name: node,
          role: 'ingress',
          args: [
            '--node',
            node,
            '--log-address',
            this.#ingressToLog.listen,
            '--port',
            '0',
            '--metrics-port',
            '0',
            '--protocol',
            this.protocol,
            ...this.#maxPendingArgs,
            ...this.#bugArgs,
          ],
          onReady: (ready) =>
            this.#repoint(
              node,
              (ready.addresses['http'] ?? '').replace(/^https?:\/\//, '').replace(/\/.*$/, ''),
            ),
        },
        'together',
      );
    }
  }

  /**
   * The log, processors and ingresses start side by side (each finds the others through the
   * log's partition table and the proxies, re-pointed as each one is ready); all settle
   * before a failure is reported, so the cleanup never races a start still under way.
   */
  async #startTogether(): Promise<void> {
    const settled = await Promise.allSettled(this.#together.map((s) => s.start()));
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  /** The controller client, made anew when the log has moved (a restart binds a new port). */
  #control(): ControllerClient {
    if (this.#controller === undefined || this.#controllerAddress !== this.#logAddress) {
      this.#controller?.close();
      this.#controller = createControllerClient(this.#logAddress);
      this.#controllerAddress = this.#logAddress;
    }
    return this.#controller;
  }

  async #leaderOf(partition: number): Promise<string | undefined> {
    const table = await this.#control().getPartitionTable({}, { timeoutMs: 3000 });
    const node = table.partitions.find((a) => a.partition === partition)?.leaderNode;
    return node === undefined || node === '' ? undefined : node;
  }

  /** Every partition has a leader and each ingress answers a call end to end. */
  async #waitUntilServing(): Promise<void> {
    await waitFor(
      async () => {
        const table = await this.#control().getPartitionTable({}, { timeoutMs: 2000 });
        return (
          table.partitions.length >= this.topology.partitions &&
          table.partitions.every((a) => a.leaderNode !== '')
        );
      },
      { what: 'every partition has a leader', timeoutMs: this.#readyTimeoutMs, intervalMs: 25 },
    );
    // Serving means answering a call end to end; each probe is bounded and abandoned on timeout.
    for (const url of this.#ingressUrls)
      await waitFor(
        httpProbe(`${url}/Echo/echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ probe: 'ready' }),
        }),
        { what: `${url} answers a call`, timeoutMs: this.#readyTimeoutMs, intervalMs: 25 },
      );
  }

  #started(): StartedTarget {
    const tp = this.#tp;
    const links: Record<string, string> = {};
    const linkKinds: Record<string, string> = {};
    for (const name of linkNames(this.topology)) {
      links[name] = name;
      // The workload's links, the ingress's calls to processors, and every link to the log.
      linkKinds[name] = name.startsWith('client->') ? 'client' : name.endsWith('->log') ? 'storage' : 'peer';
    }
    const services = this.#services;
    return {
      name: this.name,
      runtime: this.choice.name,
      toxiproxyDescription: tp.description ?? 'Toxiproxy',
      ingressUrls: this.#ingressUrls,
      links,
      linkKinds,
      toxiproxy: tp.client,
      toxiproxyUrl: tp.url,
      services,
      extraMetricsUrls: () => ({ toxiproxy: `${tp.url.replace(/\/$/, '')}/metrics` }),
      leaderOf: (partition) => this.#leaderOf(partition),
      transferLeadership: async (partition, node) => {
        await this.#control().transferLeadership({ partition, node }, { timeoutMs: 5000 });
      },
      startProcessors: async () => {
        for (const s of services.values()) if (s.role === 'processor' && !s.isRunning()) await s.start();
      },
      stop: () => this.#cleanup.runAll(),
      [Symbol.asyncDispose]: () => this.#cleanup.runAll(),
    };
  }
}
