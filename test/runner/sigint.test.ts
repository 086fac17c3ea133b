import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { prometheusAvailable } from '../../src/observe/prometheus-server.js';
import { pidAlive } from '../../src/util/pid-alive.js';

const child = fileURLToPath(new URL('./sigint-child.js', import.meta.url));

const prometheusSkip =
  prometheusAvailable() || process.env.LIMBO_PROMETHEUS_REQUIRED === '1'
    ? false
    : 'prometheus is not installed';

test('Ctrl-C mid-chaos heals, stops every process and closes every port the run held', () =>
  interruptRun('run', 2));

test(
  "Ctrl-C mid-chaos also stops the run's Prometheus (limbo run --prometheus)",
  { skip: prometheusSkip },
  () => interruptRun('run-prometheus', 3),
);

async function interruptRun(mode: string, processes: number): Promise<void> {
  const proc = spawn(process.execPath, [child, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const held = await new Promise<{ pids: number[]; ingress: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no 'held' line within 30 s; stderr: ${stderr}`)),
      30_000,
    );
    createInterface({ input: proc.stdout }).on('line', (line) => {
      if (!line.startsWith('held ')) return;
      clearTimeout(timer);
      resolve(JSON.parse(line.slice(5)) as { pids: number[]; ingress: string });
    });
  });
  assert.equal(held.pids.length, processes);
  assert.ok(held.pids.every(pidAlive));
  // processor-1 is paused (the fault is active) when the interrupt comes
  // (SIGSTOP is delivered asynchronously: wait, bounded, for the stopped state)
  const state = () => readFileSync(`/proc/${held.pids[0]}/stat`, 'utf8').split(') ')[1]?.[0];
  const until = Date.now() + 5000;
  while (state() !== 'T' && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  assert.equal(state(), 'T');
  proc.kill('SIGINT');
  const killer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  const code = await exited;
  clearTimeout(killer);
  assert.equal(code, 130, stderr);
  for (const pid of held.pids) assert.ok(!pidAlive(pid), `pid ${pid} outlived the run`);
  await assert.rejects(fetch(held.ingress + '/Echo/echo', { method: 'POST', body: '{}' }));
}
