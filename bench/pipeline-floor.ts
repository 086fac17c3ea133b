// The floor pipeline (pipeline-node.ts): five Node processes with the reference cluster's
// message shape and nothing else, started as children on free ports of 127.0.0.1. What it
// does per second is what any Node implementation of this request path can do on this
// machine with no work of its own: the ceiling the cluster's calls/s ratio is read against.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('./pipeline-node.js', import.meta.url));

export interface PipelineFloor extends AsyncDisposable {
  url: string;
  /** Where the log keeps its partition files (removed on dispose). */
  dataDir: string;
  /** log, ingress, processors: in the order the cluster bench prints its services. */
  pids: number[];
}

function start(children: ChildProcess[], args: string[]): Promise<{ port: number; pid: number }> {
  const child = spawn(process.execPath, [entry, ...args], {
    // stdin open: the child ends when this process does, however it ends (Ctrl-C, a crash).
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pipeline ${args[0]} not ready in 10 s`)), 10_000);
    child.once('exit', (code) => reject(new Error(`pipeline ${args[0]} exited ${code}`)));
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      const m = /^ready (\d+)$/.exec(line);
      if (m) resolve({ port: Number(m[1]), pid: child.pid! });
      else reject(new Error(`pipeline ${args[0]}: ${line}`));
    });
  });
}

async function stopAll(children: ChildProcess[], dataDir: string): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          const timer = setTimeout(() => c.kill('SIGKILL'), 3000);
          c.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          c.kill('SIGTERM');
        }),
    ),
  );
  rmSync(dataDir, { recursive: true, force: true });
}

export async function startPipelineFloor(processors = 3, partitions = 4): Promise<PipelineFloor> {
  const dataDir = mkdtempSync(join(tmpdir(), 'limbo-floor-'));
  const children: ChildProcess[] = [];
  try {
    const log = await start(children, ['log', dataDir, String(partitions)]);
    const procs = await Promise.all(
      Array.from({ length: processors }, (_, i) =>
        start(children, ['processor', String(i), String(log.port)]),
      ),
    );
    const ingress = await start(children, [
      'ingress',
      String(partitions),
      ...procs.map((p) => String(p.port)),
    ]);
    return {
      url: `http://127.0.0.1:${ingress.port}`,
      dataDir,
      pids: [log.pid, ingress.pid, ...procs.map((p) => p.pid)],
      [Symbol.asyncDispose]: () => stopAll(children, dataDir),
    };
  } catch (err) {
    await stopAll(children, dataDir);
    throw err;
  }
}
