// Interrupting a process that started containers leaves none behind: its reaper (a
// detached child) removes them when the process dies by SIGKILL or by an unhandled Ctrl-C,
// then exits itself. Skips when no engine or image is there.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { LABEL_RUN, listContainersByLabel, removeRunContainers } from '../../src/runtime/docker.js';
import { dockerClient } from '../../src/runtime/docker-engine.js';
import { dockerTestEnv } from '../helpers/docker.js';

const { skip } = await dockerTestEnv();
const runDir = mkdtempSync(join(tmpdir(), 'limbo-docker-int-'));
const runIds: string[] = [];
after(async () => {
  if (!skip) await Promise.all(runIds.map((id) => removeRunContainers(id)));
  rmSync(runDir, { recursive: true, force: true });
});

// The child: starts one container for the run given in argv, prints
// `started <container-id> <reaper-pid>`, then waits to be killed (bounded: it exits by
// itself after 2 minutes). Inline, because node --test runs every .js file under test/.
const childScript = `
const { startContainerService } = await import(${JSON.stringify(new URL('../../src/runtime/docker.js', import.meta.url).href)});
const { ensureReaper } = await import(${JSON.stringify(new URL('../../src/runtime/docker-reaper.js', import.meta.url).href)});
const [runId, runDir] = process.argv.slice(1);
const started = await startContainerService({ name: 'log', role: 'log', args: ['--data-dir', '/tmp/limbo-log'], runDir, runId });
process.stdout.write('started ' + started.id + ' ' + ensureReaper().pid + '\\n');
setTimeout(() => process.exit(3), 120_000);
`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

for (const signal of ['SIGKILL', 'SIGINT'] as const) {
  test(`a process killed by ${signal} leaves no container behind`, { skip }, async () => {
    const runId = `int-${signal.toLowerCase()}-${randomBytes(3).toString('hex')}`;
    runIds.push(runId);
    const child = spawn(process.execPath, ['--input-type=module', '-e', childScript, runId, runDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`child not started in 60 s: ${stderr}`)), 60_000);
        createInterface({ input: child.stdout }).on('line', (l) => {
          clearTimeout(timer);
          resolve(l);
        });
        void exited.then(() => reject(new Error(`child exited: ${stderr}`)));
      });
      const [, containerId, reaperPid] = line.split(' ');
      const client = await dockerClient();
      assert.deepEqual(await listContainersByLabel(client, { [LABEL_RUN]: runId }), [containerId]);
      assert.ok(alive(Number(reaperPid)), 'the reaper runs beside its parent');

      child.kill(signal);
      await exited;
      await waitFor(
        'containers removed',
        async () => (await listContainersByLabel(client, { [LABEL_RUN]: runId })).length === 0,
        30_000,
      );
      await waitFor('reaper exited', () => !alive(Number(reaperPid)), 10_000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
}
