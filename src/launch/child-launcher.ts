// One way to launch a child process limbo owns (a service of the local runtime, the run's
// Prometheus): spawn it, keep the tail of its output (and append it to a log file), wait for it
// to be ready (a line it prints or a probe, bounded, given up when it exits), signal it by its
// own PID, stop it with a bounded grace period before SIGKILL, and optionally kill it when this
// process exits without stopping it.
//
//   ChildLauncher.launch ─▶ spawn ─▶ stdout/stderr lines ─▶ OutputTail (ring + log file)
//                                        └─▶ line listeners (a ready line)
//                           exit ─▶ exited ─▶ log file closed, parent-exit hook removed
//   stop(graceMs) ─▶ SIGCONT, SIGTERM ─▶ grace ─▶ SIGKILL ─▶ { graceful, ms, graceMs }
//
// Only processes launched here are ever signalled, always by their own PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { LimboError, TimeoutError } from '../util/errors.js';

/**
 * The last lines of a process's (or container's) output, for error messages, each also
 * appended to a log file when one is given.
 */
export class OutputTail {
  readonly #keep: number;
  readonly #lines: string[] = [];
  readonly #log: WriteStream | undefined;

  constructor(keep: number, logFile?: string) {
    this.#keep = keep;
    if (logFile !== undefined) {
      mkdirSync(dirname(logFile), { recursive: true });
      this.#log = createWriteStream(logFile, { flags: 'a' });
    }
  }

  add(line: string): void {
    this.#lines.push(line);
    if (this.#lines.length > this.#keep) this.#lines.shift();
    this.#log?.write(line + '\n');
  }

  /** The last `n` lines, newline-joined. */
  tail(n: number): string {
    return this.#lines.slice(-n).join('\n');
  }

  some(predicate: (line: string) => boolean): boolean {
    return this.#lines.some(predicate);
  }

  /** Closes the log file after `delayMs`, giving stream readers a moment to drain. */
  endLog(delayMs = 0): void {
    if (this.#log === undefined) return;
    if (delayMs <= 0) this.#log.end();
    else setTimeout(() => this.#log?.end(), delayMs).unref();
  }
}

/** The process exited before it was ready. */
export class ChildExitedError extends LimboError {
  constructor(message: string) {
    super('E_CHILD_EXITED', message);
  }
}

export interface LaunchOptions {
  /** A name for messages, e.g. `processor-1`. */
  name: string;
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where to append the process's stdout and stderr. */
  logFile?: string;
  /** How many lines of output to keep for `tail` (default 200). */
  tailLines?: number;
  /** How many lines `tail()` gives without an argument (default 40). */
  defaultTailLines?: number;
}

export interface ReadyWait<T> {
  timeoutMs: number;
  /** Recognises the ready line on stdout. */
  matchLine?: (line: string) => T | undefined;
  /** Readiness some other way (an HTTP or TCP probe); aborted at the bound or on exit. */
  probe?: (signal: AbortSignal) => Promise<T>;
}

/** How a stop went: SIGTERM sufficed (graceful) or SIGKILL ended it after `graceMs`. */
export interface StopResult {
  graceful: boolean;
  /** From SIGTERM to exit. */
  ms: number;
  graceMs: number;
}

/** A launched child process: its PID, its exit, its output's tail, signals and a bounded stop. */
export class ChildLauncher {
  readonly name: string;
  readonly pid: number;
  /** Resolves with the exit code (or signal name, or `spawn-error`) once the process has exited. */
  readonly exited: Promise<number | string>;
  readonly output: OutputTail;
  readonly #child: ChildProcess;
  readonly #defaultTailLines: number;
  readonly #lineListeners = new Set<(line: string) => void>();
  #exitCode: number | string | undefined;
  #lastStop: StopResult | undefined;
  #stopping: Promise<StopResult | undefined> | undefined;

  static launch(options: LaunchOptions): ChildLauncher {
    return new ChildLauncher(options);
  }

  private constructor(options: LaunchOptions) {
    this.name = options.name;
    this.#defaultTailLines = options.defaultTailLines ?? 40;
    this.output = new OutputTail(options.tailLines ?? 200, options.logFile);
    this.#child = spawn(options.command, [...options.args], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.pid = this.#child.pid ?? -1;
    this.exited = this.#watchExit();
    this.#readLines();
  }

  #watchExit(): Promise<number | string> {
    const exited = new Promise<number | string>((resolve) => {
      this.#child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
      this.#child.once('error', (err) => {
        this.output.add(`spawn error: ${err.message}`);
        resolve('spawn-error');
      });
    });
    void exited.then((code) => {
      this.#exitCode = code;
      this.output.endLog(100);
    });
    return exited;
  }

  #readLines(): void {
    createInterface({ input: this.#child.stdout! }).on('line', (line) => {
      this.output.add(line);
      for (const listener of this.#lineListeners) listener(line);
    });
    createInterface({ input: this.#child.stderr! }).on('line', (line) => this.output.add(line));
  }

  isRunning(): boolean {
    return this.#exitCode === undefined;
  }

  /** The exit code (or signal name) once it has exited, else undefined. */
  exitCode(): number | string | undefined {
    return this.#exitCode;
  }

  tail(lines = this.#defaultTailLines): string {
    return this.output.tail(lines);
  }

  /** Signals the process by its PID while it runs. */
  kill(signal: NodeJS.Signals): void {
    if (this.isRunning() && this.#child.pid !== undefined) process.kill(this.#child.pid, signal);
  }

  /**
   * Resolves once a stdout line matches `matchLine` or `probe` resolves; rejects with a
   * TimeoutError after `timeoutMs` or a ChildExitedError when the process exits first.
   */
  untilReady<T>(wait: ReadyWait<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        if (listener !== undefined) this.#lineListeners.delete(listener);
      };
      const timer = setTimeout(() => {
        done();
        reject(new TimeoutError(`${this.name} did not become ready within ${wait.timeoutMs} ms`));
      }, wait.timeoutMs);
      const matchLine = wait.matchLine;
      const listener =
        matchLine === undefined
          ? undefined
          : (line: string): void => {
              const info = matchLine(line);
              if (info === undefined) return;
              done();
              resolve(info);
            };
      if (listener !== undefined) this.#lineListeners.add(listener);
      void this.exited.then((code) => {
        done();
        reject(new ChildExitedError(`${this.name} exited (${code}) before it was ready`));
      });
      if (wait.probe !== undefined) {
        const stopProbing = new AbortController();
        void this.exited.then(() => stopProbing.abort());
        setTimeout(() => stopProbing.abort(), wait.timeoutMs).unref();
        wait.probe(stopProbing.signal).then(
          (info) => {
            done();
            resolve(info);
          },
          () => undefined, // the timer or the exit rejects with the reason
        );
      }
    });
  }

  /**
   * SIGCONT (a paused process cannot act on SIGTERM), SIGTERM, then SIGKILL after `graceMs`;
   * resolves once it has exited, with how (undefined when it was not running). Stops already
   * under way are joined.
   */
  stop(graceMs: number): Promise<StopResult | undefined> {
    if (!this.isRunning()) return Promise.resolve(undefined);
    return (this.#stopping ??= this.#stop(graceMs).finally(() => (this.#stopping = undefined)));
  }

  async #stop(graceMs: number): Promise<StopResult> {
    const t0 = performance.now();
    let escalated = false;
    this.kill('SIGCONT');
    this.kill('SIGTERM');
    const timer = setTimeout(() => {
      escalated = this.isRunning();
      this.kill('SIGKILL');
    }, graceMs);
    await this.exited;
    clearTimeout(timer);
    this.#lastStop = { graceful: !escalated, ms: performance.now() - t0, graceMs };
    return this.#lastStop;
  }

  /** How the last stop went (undefined before one). */
  lastStop(): StopResult | undefined {
    return this.#lastStop;
  }

  /**
   * If this Node process exits while the child still runs (no stop), SIGKILL it and then run
   * `andThen` (synchronously: an exit handler can do nothing else). Removed once the child exits.
   */
  killOnParentExit(andThen?: () => void): void {
    const onExit = (): void => {
      if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill('SIGKILL');
      andThen?.();
    };
    process.once('exit', onExit);
    void this.exited.then(() => process.off('exit', onExit));
  }
}
