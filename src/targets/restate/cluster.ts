// A local N-node Restate cluster (default 3) plus the SDK service endpoint, as child
// processes on 127.0.0.1, ready when a call has succeeded through every ingress.
//
//   restate-server n1..nN ──(fabric, advertised address: real or a proxy)──▶ each other
//        │  ▲ ingress / admin (real ports)            ▲ /metrics on the real fabric port
//        ▼  │                                          │ (observers never go through proxies)
//   restate-services (SDK endpoint, HTTP/2) ◀── registered through POST /deployments
//
// Start-up: free ports → one TOML config per node → start every node → `restatectl provision`
// (retried, output read: it exits 0 on failure too) → register the endpoint → wait until Echo
// answers through every ingress. Every wait is bounded; on any error everything started so far
// is stopped and the temp data dir removed. Logs go to runDir/logs/, configs to runDir/config/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { startProcess, type StartedProcess } from '../../runtime/process.js';
import { silentLogger, type Logger } from '../../telemetry/logger.js';
import { sleep } from '../../util/backoff.js';
import { LimboError, TimeoutError } from '../../util/errors.js';
import type { ReadyInfo } from '../../util/ready.js';
import { restateServerBinary } from './binaries.js';
import { freePorts } from './free-ports.js';
import { nodeConfigToml } from './node-config.js';
import { listPartitions, type PartitionLeader } from './partitions.js';
import { provisionCluster } from './restatectl.js';

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
  /** Bound on the whole start-up, until a call succeeded through every ingress (default 180 s). */
  readyTimeoutMs?: number;
}

export class RestateClusterError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_RESTATE_CLUSTER', message, options);
  }
}

export interface RestateNode {
  /** 1-based, also the node id (`force-node-id`). */
  readonly index: number;
  readonly name: string;
  readonly ingressUrl: string;
  readonly adminUrl: string;
  /** The real fabric address, `http://127.0.0.1:<port>/` (observers use this one). */
  readonly fabricAddress: string;
  /** What the node advertises to the others (the real address unless `advertise` said otherwise). */
  readonly advertisedAddress: string;
  /** Prometheus text, served only on the real fabric port. */
  readonly metricsUrl: string;
  readonly logFile: string;
  readonly configFile: string;
  /** The PID of the running process, undefined while it is down. */
  pid(): number | undefined;
  isRunning(): boolean;
  kill(signal?: NodeJS.Signals): void;
  pause(): void;
  resume(): void;
  /** Stops the node if it runs (gracefully) and starts it again with the same config and data. */
  restart(): Promise<void>;
  /** Starts the node again after a kill or stop (no-op while it runs). */
  start(): Promise<void>;
  stop(): Promise<void>;
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
  /** Partition → leader, from `restatectl partitions list` through a running node's real fabric port. */
  partitionLeaders(): Promise<Map<number, PartitionLeader>>;
  /** Bounded wait until Echo answers through each of `ingressUrls` (default: every node's). */
  waitUntilServing(timeoutMs: number, ingressUrls?: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

const NODE_READY_TIMEOUT_MS = 30_000;
const NODE_STOP_GRACE_MS = 8_000;
const CALL_ATTEMPT_TIMEOUT_MS = 5_000;
const POLL_INTERVAL_MS = 300;

/** Restate's pretty log prints this when a server socket (the fabric one comes first) is bound. */
function matchNodeReady(name: string, fabricAddress: string) {
  return (line: string): ReadyInfo | undefined =>
    line.includes('Server listening')
      ? { role: 'restate-server', node: name, pid: 0, addresses: { fabric: fabricAddress } }
      : undefined;
}

/** The environment without RESTATE_* variables: the TOML file is the whole configuration. */
function cleanEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('RESTATE_')));
}

class LocalRestateNode implements RestateNode {
  private proc: StartedProcess | undefined;
  private starting: Promise<void> | undefined;

  constructor(
    readonly index: number,
    readonly name: string,
    readonly ingressUrl: string,
    readonly adminUrl: string,
    readonly fabricAddress: string,
    readonly advertisedAddress: string,
    readonly logFile: string,
    readonly configFile: string,
    private readonly logger: Logger,
  ) {}

  get metricsUrl(): string {
    return new URL('/metrics', this.fabricAddress).toString();
  }

  pid(): number | undefined {
    return this.proc?.isRunning() ? this.proc.pid : undefined;
  }

  isRunning(): boolean {
    return this.proc?.isRunning() ?? false;
  }

  start(): Promise<void> {
    if (this.isRunning()) return Promise.resolve();
    this.starting ??= this.spawn().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async spawn(): Promise<void> {
    this.logger.info('starting restate node', { node: this.name, fabric: this.fabricAddress });
    this.proc = await startProcess({
      name: `restate-${this.name}`,
      command: restateServerBinary(),
      args: ['--no-logo', '--listen-mode', 'tcp', '--config-file', this.configFile],
      env: cleanEnv(process.env),
      logFile: this.logFile,
      readyTimeoutMs: NODE_READY_TIMEOUT_MS,
      matchReady: matchNodeReady(this.name, this.fabricAddress),
    });
    this.logger.info('restate node started', { node: this.name, pid: this.proc.pid });
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.logger.info('signal restate node', { node: this.name, signal });
    this.proc?.kill(signal);
  }

  pause(): void {
    this.kill('SIGSTOP');
  }

  resume(): void {
    this.kill('SIGCONT');
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    await this.proc?.stop(NODE_STOP_GRACE_MS);
  }
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
          metadataAddresses: advertised,
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
      partitionLeaders: async () => {
        const observer = nodes.find((n) => n.isRunning());
        if (observer === undefined) throw new RestateClusterError('no restate node is running');
        return listPartitions(observer.fabricAddress);
      },
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

async function provision(
  fabricAddress: string,
  o: { partitions: number; replication: number; deadline: number; logger: Logger },
): Promise<void> {
  let last: unknown;
  for (let attempt = 1; Date.now() < o.deadline; attempt++) {
    try {
      const outcome = await provisionCluster(fabricAddress, {
        partitions: o.partitions,
        replication: o.replication,
        timeoutMs: Math.min(20_000, Math.max(1000, o.deadline - Date.now())),
      });
      o.logger.info('restate cluster provisioned', { outcome, attempt });
      return;
    } catch (err) {
      last = err;
      o.logger.debug('provision attempt failed', { attempt, error: err });
      await sleep(1000);
    }
  }
  throw new TimeoutError('restate cluster was not provisioned in time', { cause: last });
}

async function registerDeployment(
  adminUrls: readonly string[],
  uri: string,
  deadline: number,
  logger: Logger,
): Promise<void> {
  let last = '';
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const adminUrl = adminUrls[attempt % adminUrls.length]!;
    try {
      const res = await fetch(new URL('/deployments', adminUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri, force: true }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      if (res.ok) {
        logger.info('restate deployment registered', { uri, adminUrl, attempt });
        return;
      }
      last = `${res.status} ${text}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(500);
  }
  throw new TimeoutError(`registering ${uri} with restate failed: ${last}`);
}

async function waitForLeaders(fabricAddress: string, partitions: number, deadline: number): Promise<void> {
  let last = '';
  while (Date.now() < deadline) {
    try {
      const leaders = await listPartitions(fabricAddress);
      if (leaders.size >= partitions) return;
      last = `${leaders.size} of ${partitions} partitions have a leader`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(500);
  }
  throw new TimeoutError(`restate partitions did not all get a leader in time: ${last}`);
}

/** One Echo call through `ingressUrl`; resolves true when it answered 200 with the input. */
export async function echoOnce(ingressUrl: string, timeoutMs = CALL_ATTEMPT_TIMEOUT_MS): Promise<boolean> {
  const probe = { probe: randomBytes(4).toString('hex') };
  try {
    const res = await fetch(new URL('/Echo/echo', ingressUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(probe),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await res.text();
    return res.status === 200 && body === JSON.stringify(probe);
  } catch {
    return false;
  }
}

async function waitUntilServing(ingressUrls: readonly string[], deadline: number): Promise<void> {
  const waitOne = async (url: string): Promise<void> => {
    while (Date.now() < deadline) {
      if (await echoOnce(url, Math.min(CALL_ATTEMPT_TIMEOUT_MS, Math.max(100, deadline - Date.now()))))
        return;
      await sleep(POLL_INTERVAL_MS);
    }
    throw new TimeoutError(`no call succeeded through restate ingress ${url} in time`);
  };
  await Promise.all(ingressUrls.map(waitOne));
}
