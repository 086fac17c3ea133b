// Interrupting a process that started containers leaves none behind: its reaper (a
// detached child) removes them when the process dies by SIGKILL or by an unhandled Ctrl-C,
// then exits itself; and Ctrl-C of `limbo run --runtime docker` mid-run removes every
// container of the run before the command exits (130). Skips when no engine or image is there.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { LABEL_RUN, listContainersByLabel, removeRunContainers } from '../../src/runtime/docker.js';
import { limboCommand } from '../../src/runtime/process.js';
import { dockerClient } from '../../src/runtime/docker-engine.js';
import { dockerTestEnv } from '../helpers/docker.js';
import { pidAlive } from '../../src/util/pid-alive.js';

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
      assert.ok(pidAlive(Number(reaperPid)), 'the reaper runs beside its parent');

      child.kill(signal);
      await exited;
      await waitFor(
        'containers removed',
        async () => (await listContainersByLabel(client, { [LABEL_RUN]: runId })).length === 0,
        30_000,
      );
      await waitFor('reaper exited', () => !pidAlive(Number(reaperPid)), 10_000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
}

/** Containers (running or not) whose run id this process gave: `p<pid>-…` (processRunId). */
async function containersOfProcess(pid: number): Promise<string[]> {
  const client = await dockerClient();
  const all = await client.container.dockerode.listContainers({ all: true, filters: { label: [LABEL_RUN] } });
  return all.filter((c) => c.Labels[LABEL_RUN]?.startsWith(`p${pid}-`)).map((c) => c.Names.join(','));
}

test(
  'Ctrl-C of limbo run --runtime docker removes every container of the run, then exits 130',
  { skip },
  async () => {
    const suite = fileURLToPath(new URL('../../../chaos/leader-kill.ts', import.meta.url));
    const cmd = limboCommand();
    const child = spawn(
      cmd.command,
      [...cmd.args, 'run', suite, '--runtime', 'docker', '--seed', '1', '--out', join(runDir, 'runs')],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const pid = child.pid!;
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // Mid-run: the workload runs (warm-up or later) against the whole topology in containers.
      await waitFor(
        'the run in its warm-up',
        () => /warm-up|chaos/.test(output) || child.exitCode !== null,
        120_000,
      );
      assert.equal(child.exitCode, null, output);
      const during = await containersOfProcess(pid);
      assert.equal(during.length, 6, `toxiproxy, log, 3 processors, ingress: ${during.join(' ')}`);

      child.kill('SIGINT');
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 60_000))]);
      assert.equal(code, 130, output);
      assert.match(output, /SIGINT: stopping leader-kill, cleaning up/);
      // Removed by the run's own cleanup, before it exited (not left for the reaper).
      assert.deepEqual(await containersOfProcess(pid), []);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  },
);
