// Child processes for the local runtime and for tests: start, wait for the ready line
// (bounded), kill -9, SIGSTOP/SIGCONT, graceful stop with a bounded escalation to SIGKILL.
// The process itself is launch/child-launcher.ts's; this adds the limbo ready line, the
// StartedProcess handle and the command lines of limbo's own services.
//
//   ChildLauncher ─▶ stdout lines ─▶ "limbo-ready {...}" ─▶ StartedProcess
//        └─▶ log file (stdout and stderr, interleaved, as they come)
// Only processes started here are ever signalled, always by their own PID.
import { fileURLToPath } from 'node:url';
import { ChildLauncher, type LaunchOptions } from '../launch/child-launcher.js';
import { LimboError, messageOf } from '../util/errors.js';
import { parseReadyLine, type ReadyInfo } from '../launch/ready.js';
import type { StopOutcome } from './service-handle.js';
import { bundleIfCurrent } from '../launch/bundle.js';

/** What to launch (name, command, args, env, cwd, log file) as the child launcher takes it, and how it is ready. */
export interface ProcessOptions extends Pick<
  LaunchOptions,
  'name' | 'command' | 'args' | 'env' | 'cwd' | 'logFile'
> {
  /** Bound on the wait for the ready line. */
  readyTimeoutMs?: number;
  /** Recognises the ready line; default: the `limbo-ready {json}` line (for programs that print another). */
  matchReady?: (line: string) => ReadyInfo | undefined;
  /**
   * Readiness some other way than a line (an HTTP or TCP probe): resolves once ready; aborted
   * when the bound passes or the process exits. Lines are still logged; matchReady still counts.
   */
  waitReady?: (signal: AbortSignal) => Promise<ReadyInfo>;
  /**
   * Called with the PID as soon as the process is spawned, before its ready line: an owner that
   * must be able to end it (a run's cleanup on Ctrl-C) knows it while it is still starting.
   */
  onSpawn?: (pid: number) => void;
}

export interface StartedProcess extends AsyncDisposable {
  readonly name: string;
  readonly pid: number;
  readonly ready: ReadyInfo;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  isRunning(): boolean;
  /** The last lines of output, for error messages. */
  tail(lines?: number): string;
  kill(signal: NodeJS.Signals): void;
  pause(): void;
  resume(): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
  /** How the last stop went (undefined before one). */
  lastStop(): StopOutcome | undefined;
}

export class ProcessStartError extends LimboError {
  constructor(message: string) {
    super('E_PROCESS_START', message);
  }
}

const TAIL_LINES = 200;

/**
 * Node flags every service process gets: a young generation of at most 2 MiB per semi-space
 * (V8's default is 16) — a service's garbage is short-lived per call. 4 MiB took five services
 * under load markedly lower than the default at the same CPU per call; 2 MiB lower still, for
 * a little more CPU per call (the figures are in the commit that chose it).
 */
export const serviceNodeFlags: readonly string[] = ['--max-semi-space-size=2'];

/**
 * Environment every service process gets unless the caller's env sets it: glibc's malloc keeps
 * one arena per thread that allocates (each holding on to what it freed), and a Node process
 * has a dozen threads (V8's GC and compiler workers, libuv's pool); with one arena shared by
 * all, the services under load hold less private memory (measured in the commit that chose it).
 * Other C libraries ignore it.
 */
export const serviceEnvDefaults: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '1' };

/** `env` with serviceEnvDefaults filled in where it leaves them unset. */
export function withServiceEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const [k, v] of Object.entries(serviceEnvDefaults)) if (out[k] === undefined) out[k] = v;
  return out;
}

/**
 * The command and arguments that run the `limbo` CLI from this checkout (its services, and
 * tests that run other commands). Node flags in `LIMBO_SERVICE_NODE_ARGS` (space-separated,
 * e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) go after serviceNodeFlags (so they can override
 * them), for profiling services (Node refuses --cpu-prof in NODE_OPTIONS).
 */
export function limboCommand(env: NodeJS.ProcessEnv = process.env): { command: string; args: string[] } {
  return nodeCommand(env, serviceEntryFiles.main);
}

/** As limboCommand, for `limbo serve …` only: from the services' bundle when it is current (serviceEntry). */
export function serveCommandLine(env: NodeJS.ProcessEnv = process.env): { command: string; args: string[] } {
  return nodeCommand(env, serviceEntry(env));
}

function nodeCommand(env: NodeJS.ProcessEnv, entry: string): { command: string; args: string[] } {
  const nodeArgs = (env.LIMBO_SERVICE_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  return { command: process.execPath, args: [...serviceNodeFlags, ...nodeArgs, entry] };
}

/**
 * `dist/src/cli/serve-launch.js`, which runs `dist/src/cli/serve.bundle.cjs` (scripts/
 * bundle-services.mjs: `limbo serve` and what it loads in one file, about half a service's
 * start-up) from cached bytecode, when the bundle exists, `LIMBO_SERVICE_BUNDLE` is not `off`,
 * and it is no older than the last tsc build (dist/.tsbuildinfo), so a bundle left behind by an
 * earlier build never runs newer code's services; else `dist/src/cli/main.js`.
 */
export function serviceEntry(env: NodeJS.ProcessEnv = process.env, files = serviceEntryFiles): string {
  const entry = bundleIfCurrent(
    files.bundle,
    files.main,
    files.buildInfo,
    env.LIMBO_SERVICE_BUNDLE === 'off',
  );
  return entry === files.bundle ? files.launcher : entry;
}

export const serviceEntryFiles = {
  main: fileURLToPath(new URL('../cli/main.js', import.meta.url)),
  bundle: fileURLToPath(new URL('../cli/serve.bundle.cjs', import.meta.url)),
  launcher: fileURLToPath(new URL('../cli/serve-launch.js', import.meta.url)),
  buildInfo: fileURLToPath(new URL('../../.tsbuildinfo', import.meta.url)),
};

export async function startProcess(options: ProcessOptions): Promise<StartedProcess> {
  const child = ChildLauncher.launch({ ...options, tailLines: TAIL_LINES });
  if (child.pid > 0) options.onSpawn?.(child.pid);
  let stopOutcome: StopOutcome | undefined;
  const handle: StartedProcess = {
    name: options.name,
    pid: child.pid,
    ready: undefined as unknown as ReadyInfo,
    exited: child.exited,
    isRunning: () => child.isRunning(),
    tail: (n) => child.tail(n),
    kill: (signal) => child.kill(signal),
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop: async (graceMs = 3000) => {
      stopOutcome = (await child.stop(graceMs)) ?? stopOutcome;
    },
    lastStop: () => stopOutcome,
    [Symbol.asyncDispose]: () => handle.stop(),
  };
  try {
    (handle as { ready: ReadyInfo }).ready = await child.untilReady({
      timeoutMs: options.readyTimeoutMs ?? 15_000,
      matchLine: options.matchReady ?? parseReadyLine,
      ...(options.waitReady !== undefined ? { probe: options.waitReady } : {}),
    });
  } catch (err) {
    child.kill('SIGKILL');
    await child.exited;
    const message = messageOf(err);
    throw new ProcessStartError(`${message}\n--- last output of ${options.name} ---\n${handle.tail()}`);
  }
  return handle;
}

/** Starts `limbo serve <role> …` from this checkout as a child process. */
export function startLimboService(
  role: string,
  args: readonly string[],
  options: Partial<Omit<ProcessOptions, 'command' | 'args'>> = {},
): Promise<StartedProcess> {
  const env = withServiceEnv(options.env ?? process.env);
  const cmd = serveCommandLine(env);
  return startProcess({
    name: options.name ?? role,
    command: cmd.command,
    args: [...cmd.args, 'serve', role, ...args],
    ...options,
    env,
  });
}
