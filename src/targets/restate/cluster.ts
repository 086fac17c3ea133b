// A local N-node Restate cluster (default 3) plus the SDK service endpoint, as child
// processes on 127.0.0.1, ready when a call has succeeded through every ingress.
//
//   restate-server n1..nN ──(fabric, advertised address: real or a proxy)──▶ each other
//        │  ▲ ingress / admin (real ports)            ▲ /metrics on the real fabric port
//        ▼  │                                          │ (observers never go through proxies)
//   restate-services (SDK endpoint, HTTP/2) ◀── registered through POST /deployments
//
// Start-up: free ports → one TOML config per node → start every node → `restatectl provision`
// (retried, output read: it exits 0 on failure too) → register the endpoint → wait until every
// partition has a leader and Echo answers through every ingress (readiness.ts). Every wait is bounded; on any error everything started so far
// is stopped and the temp data dir removed. Logs go to runDir/logs/, configs to runDir/config/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { startProcess, type StartedProcess } from '../../runtime/process.js';
import { silentLogger, type Logger } from '../../telemetry/logger.js';
import { LimboError } from '../../util/errors.js';
import { freePorts } from '../../launch/free-ports.js';
import { nodeConfigToml } from './node-config.js';
import { listPartitions, type PartitionLeader } from './partitions.js';
import { provision, registerDeployment, waitForLeaders, waitUntilServing } from './readiness.js';
import { LocalRestateNode, type RestateNode } from './restate-node.js';

export type { RestateNode } from './restate-node.js';
export { echoOnce } from './readiness.js';

export interface RestateClusterOptions {
  /** Number of nodes, each with every role (default 3). */
  nodes?: number;
  /** Partitions provisioned (default 8). */
  partitions?: number;
  /** Log and partition replication (default min(2, nodes)). */
  replication?: number;
  /** Logs go to runDir/logs, configs to runDir/config; data lives in a temp dir removed on stop. */
  runDir: string;
  logger?: Logger;
  /**
   * The fabric address node `node` (1-based) advertises, e.g. `http://127.0.0.1:<proxy port>/`
   * of a proxy to `realFabricAddress` (called before any node starts); default the real one.
   */
  advertise?: (node: number, realFabricAddress: string) => string | Promise<string>;
  /** The URI Restate is given for the service endpoint (e.g. a proxy's); default its real URL. */
  serviceUri?: (realServiceUrl: string) => string | Promise<string>;
  /**
   * Each node dials its own metadata server at its real fabric address (the others at their
   * advertised ones), so a fault on the proxy in front of a node spares its link to itself.
   */
  selfMetadataDirect?: boolean;
  /** Bound on the whole start-up, until a call succeeded through every ingress (default 180 s). */
  readyTimeoutMs?: number;
}

export class RestateClusterError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_RESTATE_CLUSTER', message, options);
  }
}

export interface StartedRestateCluster extends AsyncDisposable {
  readonly nodes: readonly RestateNode[];
  readonly ingressUrls: readonly string[];
  readonly adminUrls: readonly string[];
  readonly metricsUrls: readonly string[];
  readonly clusterName: string;
  /** The nodes' data (base dirs), a temp dir removed by stop(). */
  readonly dataDir: string;
  /** The service endpoint's real URL and the URI it was registered with. */
  readonly services: { readonly url: string; readonly registeredUri: string; readonly pid: number };
  /** Milliseconds from the first spawn until a call succeeded through every ingress. */
  readonly startupMs: number;
  /**
   * Partition → leader, from `restatectl partitions list` through a live node's real fabric
   * port (running, not paused; the next one if it fails). A partition without leader is absent.
   */
  partitionLeaders(): Promise<Map<number, PartitionLeader>>;
  /** Bounded wait until Echo answers through each of `ingressUrls` (default: every node's). */
  waitUntilServing(timeoutMs: number, ingressUrls?: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startRestateCluster(options: RestateClusterOptions): Promise<StartedRestateCluster> {
  const count = options.nodes ?? 3;
  const partitions = options.partitions ?? 8;
  const replication = options.replication ?? Math.min(2, count);
  const logger = options.logger ?? silentLogger;
  const readyTimeoutMs = options.readyTimeoutMs ?? 180_000;
  const startedAt = Date.now();
  const deadline = startedAt + readyTimeoutMs;
  if (!Number.isInteger(count) || count < 1) throw new RestateClusterError(`bad node count ${count}`);

  const clusterName = `limbo-${randomBytes(4).toString('hex')}`;
  const logDir = join(options.runDir, 'logs');
  const configDir = join(options.runDir, 'config');
  mkdirSync(logDir, { recursive: true });
  mkdirSync(configDir, { recursive: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'limbo-restate-'));
  logger.info('starting restate cluster', { clusterName, nodes: count, partitions, replication, dataDir });

  const nodes: LocalRestateNode[] = [];
  let services: StartedProcess | undefined;
  const cleanup = async (): Promise<void> => {
    await Promise.allSettled([...nodes.map((n) => n.stop()), services?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    const ports = await freePorts(count * 3);
    const real = Array.from({ length: count }, (_, i) => ({
      fabric: ports[i * 3]!,
      admin: ports[i * 3 + 1]!,
      ingress: ports[i * 3 + 2]!,
    }));
    const advertised: string[] = [];
    for (const [i, p] of real.entries()) {
      const realAddress = `http://127.0.0.1:${p.fabric}/`;
      advertised.push((await options.advertise?.(i + 1, realAddress)) ?? realAddress);
    }
    for (const [i, p] of real.entries()) {
      const index = i + 1;
      const name = `n${index}`;
      const configFile = join(configDir, `restate-${name}.toml`);
      writeFileSync(
        configFile,
        nodeConfigToml({
          clusterName,
          nodeName: name,
          nodeId: index,
          baseDir: join(dataDir, name),
          fabricPort: p.fabric,
          adminPort: p.admin,
          ingressPort: p.ingress,
          advertisedAddress: advertised[i]!,
          metadataAddresses:
            options.selfMetadataDirect === true
              ? advertised.map((a, j) => (j === i ? `http://127.0.0.1:${p.fabric}/` : a))
              : advertised,
          partitions,
          replication,
        }),
      );
      nodes.push(
        new LocalRestateNode(
          index,
          name,
          `http://127.0.0.1:${p.ingress}`,
          `http://127.0.0.1:${p.admin}`,
          `http://127.0.0.1:${p.fabric}/`,
          advertised[i]!,
          join(logDir, `restate-${name}.log`),
          configFile,
          logger,
        ),
      );
    }

    const endpointMain = fileURLToPath(new URL('./endpoint-main.js', import.meta.url));
    const [servicesResult, ...nodeResults] = await Promise.allSettled([
      startProcess({
        name: 'restate-services',
        command: process.execPath,
        args: [endpointMain],
        logFile: join(logDir, 'restate-services.log'),
      }),
      ...nodes.map((n) => n.start()),
    ]);
    if (servicesResult.status === 'fulfilled') {
      services = servicesResult.value;
      logger.info('restate services started', { pid: services.pid, url: services.ready.addresses['http'] });
    }
    const failed = [servicesResult, ...nodeResults].find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    logger.info('restate nodes started', { ms: Date.now() - startedAt });

    await provision(nodes[0]!.fabricAddress, { partitions, replication, deadline, logger });
    const serviceUrl = services!.ready.addresses['http']!;
    const registeredUri = (await options.serviceUri?.(serviceUrl)) ?? serviceUrl;
    await registerDeployment(
      nodes.map((n) => n.adminUrl),
      registeredUri,
      deadline,
      logger,
    );
    await waitForLeaders(nodes[0]!.fabricAddress, partitions, deadline);
    logger.info('every restate partition has a leader', { ms: Date.now() - startedAt });
    await waitUntilServing(
      nodes.map((n) => n.ingressUrl),
      deadline,
    );
    const startupMs = Date.now() - startedAt;
    logger.info('restate cluster ready', { ms: startupMs, clusterName });

    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => (stopping ??= cleanup());
    const servicesProc = services!;
    return {
      nodes,
      ingressUrls: nodes.map((n) => n.ingressUrl),
      adminUrls: nodes.map((n) => n.adminUrl),
      metricsUrls: nodes.map((n) => n.metricsUrl),
      clusterName,
      dataDir,
      services: { url: serviceUrl, registeredUri, pid: servicesProc.pid },
      startupMs,
      partitionLeaders: () => partitionLeaders(nodes),
      waitUntilServing: (timeoutMs, urls = nodes.map((n) => n.ingressUrl)) =>
        waitUntilServing(urls, Date.now() + timeoutMs),
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (err) {
    logger.warn('restate cluster start failed; cleaning up', { error: err });
    await cleanup();
    throw err;
  }
}

async function partitionLeaders(nodes: readonly RestateNode[]): Promise<Map<number, PartitionLeader>> {
  const observers = nodes.filter((n) => n.isRunning() && !n.isPaused());
  if (observers.length === 0) throw new RestateClusterError('no restate node is running');
  let last: unknown;
  for (const observer of observers) {
    try {
      return await listPartitions(observer.fabricAddress);
    } catch (err) {
      last = err;
    }
  }
  throw last;
}
