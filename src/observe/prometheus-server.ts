// A real Prometheus for tests and runs: dashboards and alert rules are only worth what a
// real Prometheus makes of them, so this starts Debian's `prometheus` binary rather than
// imitating its query engine.
//
//   targets ─▶ targets.json (file_sd) ◀─ setTargets() rewrites it (atomically) on a restart
//   prometheus.yml (temp dir) ─▶ prometheus --web.listen-address=127.0.0.1:<free>
//                                   │  polled on /-/ready (bounded)
//   query() / queryRange() ─▶ /api/v1/query[_range] ─▶ typed results or PromQueryError
//
// Targets go through file-based service discovery rather than a static list: a restarted
// service comes back on a new metrics port, and rewriting targets.json is all it takes for
// Prometheus to follow it (discovery reloads every second instead of the default 5 s).
// The process is ours (launch/child-launcher.ts): stopped by its PID (SIGTERM, then SIGKILL
// after a grace period), and its temp dir removed. Callers wait with `waitForTargetsUp` / `waitForData`, both bounded.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile, mkdir } from 'node:fs/promises';
import { freePort } from '../launch/free-ports.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ChildLauncher } from '../launch/child-launcher.js';
import { httpProbe, waitFor } from '../util/wait.js';
import { LimboError, TimeoutError, messageOf } from '../util/errors.js';

export interface PrometheusTarget {
  /** Becomes the `job` label. */
  job: string;
  /** Full scrape URL, e.g. `http://127.0.0.1:9464/metrics`. */
  url: string;
  /** Extra labels attached to every series of this target. */
  labels?: Record<string, string>;
}

export interface PrometheusOptions {
  targets: readonly PrometheusTarget[];
  /** Scrape (and rule evaluation) interval; 1000 in runs. */
  scrapeIntervalMs: number;
  /** Where the TSDB lives (kept on stop); a fresh temp dir (removed on stop) when omitted. */
  dataDir?: string;
  /** Alert/recording rule files, loaded as given (paths resolved to absolute). */
  rulesFiles?: readonly string[];
  /** The Prometheus binary; `prometheus` on PATH by default. */
  binary?: string;
  /** Bound on the wait for `/-/ready`. */
  readyTimeoutMs?: number;
  /** Bound on the wait for exit after SIGTERM before SIGKILL. */
  stopGraceMs?: number;
}

export interface InstantSample {
  metric: Record<string, string>;
  /** [unix seconds, value as Prometheus prints it ("NaN", "+Inf" included)]. */
  value: [number, string];
}

export interface RangeSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

export type QueryData =
  | { resultType: 'vector'; result: InstantSample[] }
  | { resultType: 'matrix'; result: RangeSeries[] }
  | { resultType: 'scalar' | 'string'; result: [number, string] };

export interface TargetHealth {
  job: string;
  scrapeUrl: string;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
  /** When it was last scraped (epoch ms; 0 before the first scrape). */
  lastScrapeMs: number;
}

export interface AlertState {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing' | 'inactive';
  value: string;
}

/** A loaded alerting or recording rule as Prometheus last evaluated it. */
export interface RuleState {
  group: string;
  name: string;
  type: 'alerting' | 'recording';
  query: string;
  /** `ok` once evaluated without error; `err` with `lastError`; `unknown` before the first evaluation. */
  health: 'ok' | 'err' | 'unknown';
  lastError: string;
  /** Alerting rules: inactive | pending | firing. */
  state?: string;
}

export interface StartedPrometheus extends AsyncDisposable {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly pid: number;
  /** The TSDB directory (inside the temp dir, removed on stop, unless `dataDir` was given). */
  readonly dataDir: string;
  /** Replaces the scrape targets (file_sd: Prometheus picks the change up within ~1-2 s). */
  setTargets(targets: readonly PrometheusTarget[]): Promise<void>;
  /** Evaluates an instant query (at `time`, default now). */
  query(promql: string, time?: Date): Promise<QueryData>;
  queryRange(promql: string, start: Date, end: Date, stepS: number): Promise<RangeSeries[]>;
  targets(): Promise<TargetHealth[]>;
  alerts(): Promise<AlertState[]>;
  rules(): Promise<RuleState[]>;
  /** Resolves once every configured target has been scraped successfully; bounded. */
  waitForTargetsUp(timeoutMs: number): Promise<void>;
  /**
   * Resolves once every current target has been scraped (successfully or not) after `afterMs`
   * (epoch ms), so a query at that time sees each target's state then; bounded.
   */
  waitForScrapesAfter(afterMs: number, timeoutMs: number): Promise<void>;
  /** Resolves with the first non-empty instant result of `promql`; bounded. */
  waitForData(promql: string, timeoutMs: number): Promise<InstantSample[]>;
  /** The last lines Prometheus logged, for error messages. */
  tail(lines?: number): string;
  stop(): Promise<void>;
}

export class PrometheusStartError extends LimboError {
  constructor(
    message: string,
    options?: ErrorOptions,
    /** Its listen port was taken (another process bound it between probe and bind): worth a retry. */
    readonly portInUse = false,
  ) {
    super('E_PROMETHEUS_START', message, options);
  }
}

/** Prometheus refused a query (bad PromQL, bad parameters) or answered with an error. */
export class PromQueryError extends LimboError {
  constructor(
    readonly errorType: string,
    message: string,
  ) {
    super('E_PROMQL', message);
  }
}

const TAIL_LINES = 100;
const POLL_MS = 200;
const START_ATTEMPTS = 3;

/** True when the binary runs (`prometheus --version`), so tests can skip cleanly when absent. */
export function prometheusAvailable(binary = 'prometheus'): boolean {
  const r = spawnSync(binary, ['--version'], { stdio: 'ignore', timeout: 10_000 });
  return r.error === undefined && r.status === 0;
}

/** Name of the one scrape config; every target's `job` label comes from its target group. */
export const SCRAPE_JOB = 'limbo';

/**
 * The Prometheus configuration: one scrape config whose targets come from `targetsFile`
 * (file_sd, see `fileSdGroups`). JSON is valid YAML, so it is written as JSON.
 */
export function prometheusConfig(
  targetsFile: string,
  scrapeIntervalMs: number,
  rulesFiles: readonly string[] = [],
): object {
  const interval = `${Math.max(1, Math.round(scrapeIntervalMs))}ms`;
  return {
    global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
    rule_files: rulesFiles.map((f) => resolve(f)),
    scrape_configs: [
      {
        job_name: SCRAPE_JOB,
        // fsnotify sees a rewrite at once; the refresh is the fallback.
        file_sd_configs: [{ files: [resolve(targetsFile)], refresh_interval: '5s' }],
      },
    ],
  };
}

/**
 * The file_sd target groups for `targets`: one group per target, its job, path, scheme and
 * query as labels (discovered labels win over the scrape config's defaults, `job` included).
 */
export function fileSdGroups(targets: readonly PrometheusTarget[]): object[] {
  return targets.map((t) => {
    const u = new URL(t.url);
    const params = Object.fromEntries([...u.searchParams].map(([k, v]) => [`__param_${k}`, v]));
    return {
      targets: [u.host],
      labels: {
        ...t.labels,
        ...params,
        job: t.job,
        __metrics_path__: u.pathname,
        __scheme__: u.protocol.replace(':', ''),
      },
    };
  });
}

/** Writes the targets file atomically (temp file + rename), so Prometheus never reads half a file. */
async function writeTargets(file: string, targets: readonly PrometheusTarget[]): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(fileSdGroups(targets), null, 2)}\n`);
  await rename(tmp, file);
}

export async function startPrometheus(options: PrometheusOptions): Promise<StartedPrometheus> {
  const ownDir = await mkdtemp(join(tmpdir(), 'limbo-prometheus-'));
  try {
    const dataDir = options.dataDir ?? join(ownDir, 'data');
    await mkdir(dataDir, { recursive: true });
    const configFile = join(ownDir, 'prometheus.yml');
    const targetsFile = join(ownDir, 'targets.json');
    await writeTargets(targetsFile, options.targets);
    const config = prometheusConfig(targetsFile, options.scrapeIntervalMs, options.rulesFiles);
    await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);
    let lastError: unknown;
    for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
      const port = await freePort();
      try {
        return await RunningPrometheus.launch(options, { configFile, targetsFile, dataDir, ownDir }, port);
      } catch (err) {
        lastError = err;
        // Another process may have taken the port between probe and bind: try another.
        if (!(err instanceof PrometheusStartError) || !err.portInUse) break;
      }
    }
    throw lastError;
  } catch (err) {
    await rm(ownDir, { recursive: true, force: true });
    throw err;
  }
}

/** Where one Prometheus keeps its files. */
interface PrometheusFiles {
  configFile: string;
  targetsFile: string;
  dataDir: string;
  /** The temp dir holding them (removed on stop). */
  ownDir: string;
}

/**
 * A launched Prometheus: the child process (launch/child-launcher.ts) and the HTTP API over it.
 * Steps: `launch` spawns and `waitUntilReady`; `api`/`get` call the API; the queries, target
 * rewrites and bounded waits build on them; `stop` ends the process and removes its files.
 */
class RunningPrometheus implements StartedPrometheus {
  readonly url: string;
  readonly pid: number;
  readonly dataDir: string;
  readonly #child: ChildLauncher;
  readonly #files: PrometheusFiles;
  readonly #stopGraceMs: number;
  /** How many targets the last setTargets gave (what the waits expect to see). */
  #expected: number;
  /** Rewrites are serialized, so the file always ends up holding the last targets given. */
  #writing = Promise.resolve();
  #stopped: Promise<void> | undefined;

  static async launch(
    options: PrometheusOptions,
    files: PrometheusFiles,
    port: number,
  ): Promise<RunningPrometheus> {
    const prometheus = new RunningPrometheus(options, files, port);
    await prometheus.#waitUntilReady(options.readyTimeoutMs ?? 30_000);
    return prometheus;
  }

  private constructor(options: PrometheusOptions, files: PrometheusFiles, port: number) {
    this.url = `http://127.0.0.1:${port}`;
    this.dataDir = files.dataDir;
    this.#files = files;
    this.#stopGraceMs = options.stopGraceMs ?? 5_000;
    this.#expected = options.targets.length;
    this.#child = ChildLauncher.launch({
      name: 'prometheus',
      command: options.binary ?? 'prometheus',
      args: [
        `--config.file=${files.configFile}`,
        `--web.listen-address=127.0.0.1:${port}`,
        `--storage.tsdb.path=${files.dataDir}`,
        '--storage.tsdb.retention.time=1d',
        // A restarted service's new address is scraped within a second or two, not five.
        '--scrape.discovery-reload-interval=1s',
      ],
      tailLines: TAIL_LINES,
      defaultTailLines: 20,
    });
    this.pid = this.#child.pid;
    // If this Node process exits without stop(), leave neither our Prometheus nor its files.
    this.#child.killOnParentExit(() => rmSync(files.ownDir, { recursive: true, force: true, maxRetries: 3 }));
  }

  async #waitUntilReady(readyTimeoutMs: number): Promise<void> {
    try {
      await waitReady(this.url, this.#child, readyTimeoutMs);
    } catch (err) {
      await this.#child.stop(this.#stopGraceMs);
      const message = messageOf(err);
      // Prometheus's own log says why it exited; a taken port is the one cause worth a retry.
      const portInUse = this.#child.output.some((line) => line.includes('address already in use'));
      throw new PrometheusStartError(
        `prometheus did not become ready: ${message}\n${this.tail()}`,
        { cause: err },
        portInUse,
      );
    }
  }

  async #api<T>(path: string, params: Record<string, string>): Promise<T> {
    const res = await fetch(`${this.url}${path}`, {
      method: 'POST',
      body: new URLSearchParams(params),
      signal: AbortSignal.timeout(30_000),
    });
    return answerOf<T>(res);
  }

  async #get<T>(path: string): Promise<T> {
    return answerOf<T>(await fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(30_000) }));
  }

  query(promql: string, time?: Date): Promise<QueryData> {
    return this.#api<QueryData>('/api/v1/query', {
      query: promql,
      ...(time ? { time: String(time.getTime() / 1000) } : {}),
    });
  }

  async queryRange(promql: string, start: Date, end: Date, stepS: number): Promise<RangeSeries[]> {
    return (
      await this.#api<{ resultType: 'matrix'; result: RangeSeries[] }>('/api/v1/query_range', {
        query: promql,
        start: String(start.getTime() / 1000),
        end: String(end.getTime() / 1000),
        step: String(stepS),
      })
    ).result;
  }

  async targets(): Promise<TargetHealth[]> {
    return (
      await this.#get<{
        activeTargets: {
          labels: Record<string, string>;
          scrapeUrl: string;
          health: string;
          lastError: string;
          lastScrape: string;
        }[];
      }>('/api/v1/targets?state=active')
    ).activeTargets.map((t) => ({
      job: t.labels.job ?? '',
      scrapeUrl: t.scrapeUrl,
      health: t.health as TargetHealth['health'],
      lastError: t.lastError,
      lastScrapeMs: Math.max(0, Date.parse(t.lastScrape) || 0),
    }));
  }

  async alerts(): Promise<AlertState[]> {
    return (await this.#get<{ alerts: AlertState[] }>('/api/v1/alerts')).alerts;
  }

  async rules(): Promise<RuleState[]> {
    return (
      await this.#get<{ groups: { name: string; rules: Omit<RuleState, 'group'>[] }[] }>('/api/v1/rules')
    ).groups.flatMap((g) =>
      g.rules.map((r) => ({
        group: g.name,
        name: r.name,
        type: r.type,
        query: r.query,
        health: r.health,
        lastError: r.lastError ?? '',
        ...(r.state !== undefined ? { state: r.state } : {}),
      })),
    );
  }

  setTargets(next: readonly PrometheusTarget[]): Promise<void> {
    this.#expected = next.length;
    this.#writing = this.#writing.catch(() => {}).then(() => writeTargets(this.#files.targetsFile, next));
    return this.#writing;
  }

  async waitForTargetsUp(timeoutMs: number): Promise<void> {
    let last: TargetHealth[] = [];
    await pollUntil(timeoutMs, async () => {
      last = await this.targets();
      return last.length >= this.#expected && last.every((t) => t.health === 'up');
    }).catch((err: unknown) => {
      throw new TimeoutError(`targets not all up after ${timeoutMs} ms: ${JSON.stringify(last)}`, {
        cause: err,
      });
    });
  }

  async waitForScrapesAfter(afterMs: number, timeoutMs: number): Promise<void> {
    let last: TargetHealth[] = [];
    await pollUntil(timeoutMs, async () => {
      last = await this.targets();
      return last.length >= this.#expected && last.every((t) => t.lastScrapeMs >= afterMs);
    }).catch((err: unknown) => {
      throw new TimeoutError(
        `targets not all scraped after ${new Date(afterMs).toISOString()} within ${timeoutMs} ms: ${JSON.stringify(last)}`,
        { cause: err },
      );
    });
  }

  async waitForData(promql: string, timeoutMs: number): Promise<InstantSample[]> {
    let found: InstantSample[] = [];
    await pollUntil(timeoutMs, async () => {
      const data = await this.query(promql);
      found = data.resultType === 'vector' ? data.result : [];
      return found.length > 0;
    }).catch((err: unknown) => {
      if (err instanceof PromQueryError) throw err;
      throw new TimeoutError(`no data for ${promql} after ${timeoutMs} ms`, { cause: err });
    });
    return found;
  }

  tail(lines?: number): string {
    return this.#child.tail(lines);
  }

  /** Ends the process (bounded grace, then SIGKILL) and removes its files; later calls join. */
  readonly stop = (): Promise<void> =>
    (this.#stopped ??= this.#child.stop(this.#stopGraceMs).then(() => removeDir(this.#files.ownDir)));

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

/** An API answer's data, or a PromQueryError with what Prometheus said. */
async function answerOf<T>(res: Response): Promise<T> {
  const body = (await res.json()) as { status: string; data?: T; errorType?: string; error?: string };
  if (body.status !== 'success' || body.data === undefined) {
    throw new PromQueryError(body.errorType ?? `http ${res.status}`, body.error ?? `HTTP ${res.status}`);
  }
  return body.data;
}

function waitReady(url: string, child: ChildLauncher, timeoutMs: number): Promise<true> {
  return waitFor(httpProbe(`${url}/-/ready`, { requestTimeoutMs: 2_000 }), {
    what: 'prometheus is ready',
    timeoutMs,
    intervalMs: POLL_MS,
    giveUpIf: () => {
      const code = child.exitCode();
      return code === undefined ? undefined : new PrometheusExited(`prometheus exited (${code})`);
    },
  });
}

class PrometheusExited extends LimboError {
  constructor(message: string) {
    super('E_PROMETHEUS_EXITED', message);
  }
}

/** Polls `check` until it returns true; a throw from it is final; a TimeoutError at the deadline. */
function pollUntil(timeoutMs: number, check: () => Promise<boolean>): Promise<true> {
  let thrown: Error | undefined;
  return waitFor(
    () =>
      check().catch((err: unknown) => {
        thrown = err instanceof Error ? err : new Error(String(err));
        return false;
      }),
    { what: 'prometheus condition', timeoutMs, intervalMs: POLL_MS, giveUpIf: () => thrown },
  );
}

async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}
