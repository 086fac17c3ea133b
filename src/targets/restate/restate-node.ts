// One local restate-server process with a fixed config file and data dir, so it can be
// killed, paused, stopped and started again as the same node (same id, same data).
// Readiness of the process = its log says a server socket is bound; whether the cluster
// serves is decided by the cluster (readiness.ts), not here.
import { startProcess, type StartedProcess } from '../../runtime/process.js';
import type { StopOutcome } from '../../runtime/service-handle.js';
import type { Logger } from '../../telemetry/logger.js';
import type { ReadyInfo } from '../../launch/ready.js';
import { restateServerBinary } from './binaries.js';

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
  /** True between pause() (SIGSTOP) and resume() (SIGCONT) of the running process. */
  isPaused(): boolean;
  /** Default SIGKILL. */
  kill(signal?: NodeJS.Signals): void;
  pause(): void;
  resume(): void;
  /** Stops the node if it runs (gracefully) and starts it again with the same config and data. */
  restart(): Promise<void>;
  /** Starts the node again after a kill or stop (no-op while it runs). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** How its last graceful stop went (SIGTERM answered within the grace period, or SIGKILLed). */
  lastStop(): StopOutcome | undefined;
}

const NODE_READY_TIMEOUT_MS = 30_000;
const NODE_STOP_GRACE_MS = 8_000;

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

export class LocalRestateNode implements RestateNode {
  private proc: StartedProcess | undefined;
  private starting: Promise<void> | undefined;
  private paused = false;
  private stopOutcome: StopOutcome | undefined;

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

  isPaused(): boolean {
    return this.paused && this.isRunning();
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
    this.paused = false;
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
    if (signal === 'SIGSTOP') this.paused = true;
    if (signal === 'SIGCONT') this.paused = false;
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
    const proc = this.proc;
    if (proc === undefined || !proc.isRunning()) return;
    await proc.stop(NODE_STOP_GRACE_MS);
    this.stopOutcome = proc.lastStop();
  }

  lastStop(): StopOutcome | undefined {
    return this.stopOutcome;
  }
}
