// The floor pipeline (pipeline-node.ts): five Node processes with the reference cluster's
// message shape and nothing else, started as children on free ports of 127.0.0.1. What it
// does per second is what any Node implementation of this request path can do on this
// machine with no work of its own: the ceiling the cluster's calls/s ratio is read against.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcess, type StartedProcess } from '../src/runtime/process.js';
import { childEnv } from './parent-watch.js';

const entry = fileURLToPath(new URL('./pipeline-node.js', import.meta.url));

export interface PipelineFloor extends AsyncDisposable {
  url: string;
  /** Where the log keeps its partition files (removed on dispose). */
  dataDir: string;
  /** log, ingress, processors: in the order the cluster bench prints its services. */
  pids: number[];
}

async function stopAll(started: StartedProcess[], dataDir: string): Promise<void> {
  await Promise.all(started.map((p) => p.stop()));
  rmSync(dataDir, { recursive: true, force: true });
}

export async function startPipelineFloor(processors = 3, partitions = 4): Promise<PipelineFloor> {
  const dataDir = mkdtempSync(join(tmpdir(), 'limbo-floor-'));
  const started: StartedProcess[] = [];
  /** Starts one node; its port is the one it printed in its ready line. */
  const start = async (role: string, args: string[]): Promise<{ port: string; pid: number }> => {
    const p = await startProcess({
      name: `floor-${role}`,
      command: process.execPath,
      args: [entry, role, ...args],
      env: childEnv(),
    });
    started.push(p);
    return { port: p.ready.addresses.tcp!.split(':')[1]!, pid: p.pid };
  };
  try {
    const log = await start('log', [dataDir, String(partitions)]);
    const procs = await Promise.all(
      Array.from({ length: processors }, (_, i) => start('processor', [String(i), log.port])),
    );
    const ingress = await start('ingress', [String(partitions), ...procs.map((p) => p.port)]);
    return {
      url: `http://127.0.0.1:${ingress.port}`,
      dataDir,
      pids: [log.pid, ingress.pid, ...procs.map((p) => p.pid)],
      [Symbol.asyncDispose]: () => stopAll(started, dataDir),
    };
  } catch (err) {
    await stopAll(started, dataDir);
    throw err;
  }
}

export interface LogFloor extends AsyncDisposable {
  /** 127.0.0.1 port of its frames (pipeline-node.ts: APPEND in, ACK out). */
  port: number;
  pid: number;
  /** Where it writes its partition files (removed on dispose). */
  dataDir: string;
}

/**
 * The floor's log alone (pipeline-node.ts `log`): appends as frames on raw TCP, each
 * partition's queue written with one `O_DSYNC` write, every append acknowledged after it: the
 * log server's work with nothing else (no gRPC, HTTP/2, protobuf, metrics, spans or checks),
 * for the log bench's ceiling.
 */
export async function startLogFloor(partitions = 1): Promise<LogFloor> {
  const dataDir = mkdtempSync(join(tmpdir(), 'limbo-log-floor-'));
  try {
    const p = await startProcess({
      name: 'floor-log',
      command: process.execPath,
      args: [entry, 'log', dataDir, String(partitions)],
      env: childEnv(),
    });
    return {
      port: Number(p.ready.addresses.tcp!.split(':')[1]),
      pid: p.pid,
      dataDir,
      [Symbol.asyncDispose]: () => stopAll([p], dataDir),
    };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}
